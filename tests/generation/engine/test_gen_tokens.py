"""The token rule's mirror (app/generation/engine/tokens.py), worked by hand."""
from __future__ import annotations

import pytest

from app.generation.engine import VOCAB, expected_tokens, prompt_hash


def test_a_stream_worked_by_hand():
    # h = 1 + 3*2 + 5*3 + 7*4 = 50; t0 = (11*50 + 5) % 64 = 43; t1 = (17*43 + 13*50 + 7 + 3) % 64 = 47;
    # t2 = (17*47 + 650 + 14 + 3) % 64 = 58. The server streamed 43, 47, 58 for this prompt.
    assert prompt_hash((1, 2, 3, 4)) == 50
    assert expected_tokens((1, 2, 3, 4), 3) == [43, 47, 58]


def test_a_stream_is_a_prefix_of_its_longer_self_and_stays_in_the_vocabulary():
    long = expected_tokens((63, 0, 17, 5), 64)
    assert expected_tokens((63, 0, 17, 5), 10) == long[:10]
    assert all(0 <= t < VOCAB for t in long)
    assert expected_tokens((63, 0, 17, 5), 0) == []


def test_prompts_with_one_hash_make_one_stream_and_others_differ():
    assert prompt_hash((3, 0, 0, 0)) == prompt_hash((0, 1, 0, 0))
    assert expected_tokens((3, 0, 0, 0), 8) == expected_tokens((0, 1, 0, 0), 8)
    assert expected_tokens((1, 2, 3, 4), 8) != expected_tokens((4, 3, 2, 1), 8)


def test_a_prompt_holds_four_ids():
    with pytest.raises(ValueError, match="4 token ids"):
        prompt_hash((1, 2, 3))
