"""Access rules without Streamlit: the instructor key, the loopback test, learner ids, and that
one learner's id never reaches another's progress in the store."""
from __future__ import annotations

import pytest

from app.quiz import access_rules as rules
from app.quiz.instructor import learner_scores


class Secrets:
    """Stands in for st.secrets: .get, and optionally the error Streamlit raises with no file."""

    def __init__(self, values=None, broken=False):
        self.values, self.broken = values or {}, broken

    def get(self, name, default=None):
        if self.broken:
            raise FileNotFoundError("no secrets.toml")
        return self.values.get(name, default)


def test_key_comes_from_the_environment_first_then_secrets():
    assert rules.configured_key({rules.ENV_KEY: "env-key"}, Secrets({"instructor_key": "file-key"})) == "env-key"
    assert rules.configured_key({}, Secrets({"instructor_key": "file-key"})) == "file-key"
    assert rules.configured_key({rules.ENV_KEY: "  "}, Secrets({"instructor_key": " "})) is None
    assert rules.configured_key({}, Secrets(broken=True)) is None  # no secrets file is no key, not an error
    assert rules.configured_key({}, None) is None


def test_key_matches_only_the_exact_key():
    assert rules.key_matches("s3cret", "s3cret")
    assert rules.key_matches(" s3cret ", "s3cret")  # a pasted key's stray spaces
    for wrong in ("s3cre", "s3cret!", "S3CRET", "", None):
        assert not rules.key_matches(wrong, "s3cret")
    assert not rules.key_matches("anything", None)
    assert not rules.key_matches("", "")


@pytest.mark.parametrize("address,local", [
    (None, False), ("", False), ("0.0.0.0", False), ("::", False), ("10.1.2.3", False), ("lab.example.org", False),
    ("127.0.0.1", True), ("127.0.0.2", True), ("localhost", True), ("::1", True), ("[::1]", True),
])
def test_loopback(address, local):
    assert rules.is_loopback(address) is local
    assert rules.exposed_without_key(address, None) is (not local)
    assert rules.exposed_without_key(address, "key") is False


def test_learner_ids_carry_a_fresh_unguessable_token():
    a, b = rules.make_learner_id("ada"), rules.make_learner_id("ada")
    assert a != b
    assert rules.parse_learner_id(a)[0] == "ada" and len(rules.parse_learner_id(a)[1]) == rules.TOKEN_LENGTH
    assert rules.learner_name(a) == "ada"
    assert rules.is_learner_id(a) and not rules.is_learner_id("ada")
    assert not rules.is_learner_id("ada." + "a" * (rules.TOKEN_LENGTH - 1))  # too short to be a key
    assert not rules.is_learner_id("ada." + "A" * rules.TOKEN_LENGTH)
    assert not rules.is_learner_id(None)
    generated = rules.make_learner_id(None)
    assert rules.learner_name(generated).startswith(rules.GENERATED_PREFIX)
    assert rules.learner_name(rules.make_learner_id("  Ada\tLovelace \n")) == "Ada Lovelace"
    assert len(rules.learner_name(rules.make_learner_id("x" * 100))) == rules.NAME_LIMIT


def test_a_rename_keeps_the_token():
    a = rules.make_learner_id("ada")
    b = rules.renamed(a, "Ada L.")
    assert rules.parse_learner_id(b) == ("Ada L.", rules.parse_learner_id(a)[1])
    assert rules.renamed(a, "   ") is None
    assert rules.renamed("ada", "bob") is None  # a bare name has no token to keep


def test_reports_show_names_numbered_when_two_chose_the_same():
    a, b, c = rules.make_learner_id("ada"), rules.make_learner_id("ada"), rules.make_learner_id("bob")
    names = rules.display_names([a, b, c, "carol"])
    assert names == {a: "ada", b: "ada (2)", c: "bob", "carol": "carol"}
    assert not any(rules.parse_learner_id(x)[1] in label for x in (a, b, c) for label in names.values())


def test_one_learner_id_never_reads_anothers_progress(store, bank):
    ada, bob = rules.make_learner_id("ada"), rules.make_learner_id("bob")
    item = bank["choose-sentiment"]
    attempt = store.start_attempt(ada, seed=3)
    store.record_answer(attempt, item, 0)
    store.record_prediction(ada, "dynamic-2x4", "corrupted", "corrupted")

    # Bob's id, a guessed bare name, and ada's name with another token all see nothing of ada's.
    guesses = [bob, "ada", rules.make_learner_id("ada"), rules.learner_name(ada) + "." + "a" * rules.TOKEN_LENGTH]
    for other in guesses:
        assert store.attempts(other) == [] and store.latest_attempt(other) is None
        assert store.predictions(other) == []
        assert store.export_csv(other).strip() == ",".join(("attempt", "item", "topic", "type", "answer", "score",
                                                             "correct", "answered_at"))
    assert [a.id for a in store.attempts(ada)] == [attempt]
    assert len(store.predictions(ada)) == 1


def test_rename_moves_progress_and_never_merges(store, bank):
    ada = rules.make_learner_id("ada")
    attempt = store.start_attempt(ada, seed=3)
    store.record_answer(attempt, bank["choose-sentiment"], 0)
    store.record_prediction(ada, "dynamic-2x4", "corrupted", "intact")
    new = rules.renamed(ada, "Ada L.")
    assert store.rename_learner(ada, new) == 1
    assert store.attempts(ada) == [] and store.predictions(ada) == []
    assert [a.id for a in store.attempts(new)] == [attempt] and len(store.predictions(new)) == 1
    assert store.attempt(attempt).learner == new
    assert ada not in store.learners() and new in store.learners()

    bob = rules.make_learner_id("bob")
    store.start_attempt(bob, seed=1)
    with pytest.raises(ValueError):
        store.rename_learner(new, bob)  # would merge two learners' progress
    assert [a.id for a in store.attempts(new)] == [attempt]
    assert store.rename_learner(rules.make_learner_id("nobody"), rules.make_learner_id("nobody")) == 0


def test_reports_built_from_ids_can_be_shown_by_name(store, bank):
    ada, ada2 = rules.make_learner_id("ada"), rules.make_learner_id("ada")
    for learner in (ada, ada2):
        store.start_attempt(learner, seed=1)
    frame = learner_scores(store, bank)
    shown = frame["learner"].map(rules.display_names(store.learners()))
    assert sorted(shown) == ["ada", "ada (2)"]
