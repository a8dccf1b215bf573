"""Shuffling is reproducible from the seed and leaves the global generator alone."""
from __future__ import annotations

import random

from app.quiz.shuffle import SEED_LIMIT, item_order, new_seed, option_order, shuffled_quiz


def layout(bank, seed):
    return [(item.id, [o.key for o in options]) for item, options in shuffled_quiz(bank, seed)]


def test_same_seed_same_quiz(bank):
    assert layout(bank, 4242) == layout(bank, 4242)


def test_different_seeds_give_different_quizzes(bank):
    layouts = {str(layout(bank, seed)) for seed in range(20)}
    assert len(layouts) > 10
    assert layout(bank, 1) != layout(bank, 2)


def test_shuffle_is_a_permutation(bank):
    assert sorted(i.id for i in item_order(bank, 7)) == sorted(i.id for i in bank)
    for item in bank:
        assert sorted(o.key for o in option_order(item, 7)) == [o.key for o in item.options]


def test_option_order_depends_only_on_seed_and_item(bank):
    item = bank["choose-sentiment"]
    alone = [o.key for o in option_order(item, 99)]
    in_quiz = dict(layout(bank, 99))["choose-sentiment"]
    assert alone == in_quiz
    assert any([o.key for o in option_order(item, s)] != alone for s in range(10))


def test_global_random_state_is_untouched(bank):
    random.seed(123)
    expected = random.random()
    random.seed(123)
    shuffled_quiz(bank, 5)
    new_seed()
    assert random.random() == expected


def test_new_seed_is_a_short_int_that_varies():
    seeds = {new_seed() for _ in range(50)}
    assert all(isinstance(s, int) and 0 <= s < SEED_LIMIT for s in seeds)
    assert len(seeds) > 1
