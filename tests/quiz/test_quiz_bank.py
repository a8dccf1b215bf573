"""Bank validation: the fixture loads, and each kind of mistake is named precisely."""
from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.quiz.bank import BankError, load_bank

FIXTURES = Path(__file__).parent / "fixtures"
GOOD: dict[str, Any] = yaml.safe_load((FIXTURES / "bank.yaml").read_text())


def item(data: dict[str, Any], item_id: str) -> dict[str, Any]:
    return next(i for i in data["items"] if i.get("id") == item_id)


def write(tmp_path: Path, mutate: Callable[[dict[str, Any]], None]) -> Path:
    data = copy.deepcopy(GOOD)
    mutate(data)
    path = tmp_path / "bank.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_good_fixture_loads(bank):
    assert [i.id for i in bank] == [
        "choose-sentiment", "control-tensors-all", "capacity-direct", "queue-delay-ms", "predict-mistake",
    ]
    single = bank["choose-sentiment"]
    assert [o.key for o in single.options] == [0, 1, 2]
    assert single.correct_keys == {0}
    assert bank["control-tensors-all"].correct_keys == {0, 1, 2}
    numeric = bank["capacity-direct"]
    assert (numeric.answer, numeric.tolerance, numeric.unit) == (8.0, 0.0, "sequences")
    predict = bank["predict-mistake"]
    assert predict.scenario == "the_mistake"
    assert [o.outcome for o in predict.options] == ["corrupted", "intact"]
    assert bank.get("nope") is None


def test_links_are_only_checked_when_lessons_given(tmp_path):
    path = write(tmp_path, lambda d: item(d, "choose-sentiment").update(lesson="no-such-lesson#x"))
    assert len(load_bank(path)) == 5  # format is fine; resolution needs lessons


def _set(item_id: str, **fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda d: item(d, item_id).update(fields)


def _option(item_id: str, index: int, **fields: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(d: dict[str, Any]) -> None:
        opt = item(d, item_id)["options"][index]
        for key, value in fields.items():
            if value is DELETE:
                opt.pop(key)
            else:
                opt[key] = value
    return mutate


def _drop(item_id: str, key: str) -> Callable[[dict[str, Any]], None]:
    return lambda d: item(d, item_id).pop(key)


DELETE = object()


def _duplicate(d: dict[str, Any]) -> None:
    item(d, "queue-delay-ms")["id"] = "capacity-direct"


def _missing_id(d: dict[str, Any]) -> None:
    d["items"][0].pop("id")


# (mutation, item label as it must appear, field, words the message must contain)
CASES = [
    (_set("choose-sentiment", type="essay"), "'choose-sentiment'", "type", "not one of"),
    (_duplicate, "'capacity-direct'", "id", "duplicate id"),
    (_set("choose-sentiment", id="Choose_Sentiment"), "'Choose_Sentiment'", "id", "lowercase"),
    (_missing_id, "#0", "id", "lowercase"),
    (_option("choose-sentiment", 1, correct=True), "'choose-sentiment'", "options", "exactly one correct option, found 2"),
    (_option("predict-mistake", 0, correct=False), "'predict-mistake'", "options", "exactly one correct option, found 0"),
    (lambda d: [o.update(correct=False) for o in item(d, "control-tensors-all")["options"]],
     "'control-tensors-all'", "options", "at least 1 correct option, found 0"),
    (_drop("choose-sentiment", "source"), "'choose-sentiment'", "source", "required for single"),
    (_set("capacity-direct", source=" "), "'capacity-direct'", "source", "non-empty string naming where"),
    (_set("predict-mistake", source="batcher.md"), "'predict-mistake'", "source", "'batcher.md' must look like"),
    (_set("choose-sentiment", source="server#3406; stackoverflow"), "'choose-sentiment'", "source",
     "'stackoverflow' must look like"),
    (_option("choose-sentiment", 2, explain=DELETE), "'choose-sentiment'", "options[2].explain", "required"),
    (_option("choose-sentiment", 2, explain="  "), "'choose-sentiment'", "options[2].explain", "non-empty"),
    (_option("choose-sentiment", 0, correct="yes please"), "'choose-sentiment'", "options[0].correct", "true or false"),
    (_set("capacity-direct", answer="eight"), "'capacity-direct'", "answer", "must be a number"),
    (_set("capacity-direct", answer=True), "'capacity-direct'", "answer", "must be a number"),
    (_set("capacity-direct", tolerance=-1), "'capacity-direct'", "tolerance", "must be a number >= 0"),
    (_drop("capacity-direct", "tolerance"), "'capacity-direct'", "tolerance", "required for numeric"),
    (_drop("capacity-direct", "explain"), "'capacity-direct'", "explain", "required for numeric"),
    (_set("predict-mistake", scenario="the_guess"), "'predict-mistake'", "scenario", "not one of"),
    (_drop("predict-mistake", "scenario"), "'predict-mistake'", "scenario", "required for predict"),
    (_option("predict-mistake", 1, outcome=DELETE), "'predict-mistake'", "options[1].outcome", "required"),
    (_option("predict-mistake", 1, outcome="fine"), "'predict-mistake'", "options[1].outcome", "not one of"),
    (_option("choose-sentiment", 0, outcome="intact"), "'choose-sentiment'", "options[0].outcome", "not allowed"),
    (_set("choose-sentiment", topic="vibes"), "'choose-sentiment'", "topic", "not one of"),
    (_drop("choose-sentiment", "prompt"), "'choose-sentiment'", "prompt", "required for single"),
    (_set("choose-sentiment", answer=0), "'choose-sentiment'", "answer", "not allowed on single"),
    (_set("capacity-direct", tolerence=1), "'capacity-direct'", "tolerence", "not allowed"),
    (_set("choose-sentiment", lesson="dynamic-batching"), "'choose-sentiment'", "lesson", "lesson-id#heading-anchor"),
    (_set("choose-sentiment", lesson="dynamic-batching#no-such-heading"), "'choose-sentiment'", "lesson",
     "no heading with anchor 'no-such-heading'"),
    (_set("choose-sentiment", lesson="batching-101#why"), "'choose-sentiment'", "lesson", "no lesson with id 'batching-101'"),
    (_set("choose-sentiment", options=[{"text": "only", "correct": True, "explain": "x"}]),
     "'choose-sentiment'", "options", "at least 2"),
    (_option("choose-sentiment", 1, text="dynamic batcher"), "'choose-sentiment'", "options[1].text", "same text"),
]


@pytest.mark.parametrize("mutate,label,field,words", CASES)
def test_malformed_bank_names_file_item_and_field(tmp_path, fixture_lessons, mutate, label, field, words):
    path = write(tmp_path, mutate)
    with pytest.raises(BankError) as info:
        load_bank(path, fixture_lessons)
    message = str(info.value)
    prefix = f"{path}: item {label} field '{field}': "
    line = next((ln for ln in message.splitlines() if ln.startswith(prefix)), None)
    assert line is not None, f"expected a line starting {prefix!r} in:\n{message}"
    if words:
        assert words in line


@pytest.mark.parametrize("correct", [[True, False, False, False], [True, True, True, True]])
def test_multiple_may_have_one_or_every_option_correct(tmp_path, correct):
    # Any count from one to all, so the number of right boxes tells the learner nothing.
    def mutate(d: dict[str, Any]) -> None:
        for opt, flag in zip(item(d, "control-tensors-all")["options"], correct, strict=True):
            opt["correct"] = flag
    bank = load_bank(write(tmp_path, mutate))
    assert len(bank["control-tensors-all"].correct_keys) == sum(correct)


def test_sources_are_kept_on_the_item(bank):
    assert bank["choose-sentiment"].source == "server docs/user_guide/batcher.md"
    assert bank["predict-mistake"].source.split("; ") == [
        "server docs/user_guide/batcher.md", "lab: model_repository/asr_dynamic/config.pbtxt",
    ]


def test_exact_message_for_negative_tolerance(tmp_path):
    path = write(tmp_path, _set("capacity-direct", tolerance=-0.5))
    with pytest.raises(BankError) as info:
        load_bank(path)
    assert str(info.value) == f"{path}: item 'capacity-direct' field 'tolerance': must be a number >= 0"


def test_all_problems_are_reported_at_once(tmp_path):
    def mutate(d: dict[str, Any]) -> None:
        _set("capacity-direct", tolerance=-1)(d)
        _set("predict-mistake", scenario="nope")(d)
    path = write(tmp_path, mutate)
    with pytest.raises(BankError) as info:
        load_bank(path)
    assert [(p.item, p.field) for p in info.value.problems] == [
        ("'capacity-direct'", "tolerance"), ("'predict-mistake'", "scenario"),
    ]


@pytest.mark.parametrize("text,field", [
    ("items: [\n  - id: x\n", "file"),          # broken YAML
    ("- just a list\n", "items"),              # not a mapping
    ("items: []\n", "items"),                  # empty
    ("items:\n  - 3\n", "item"),               # item not a mapping
    ("version: 2\nitems: []\n", "version"),    # unknown top-level key
])
def test_malformed_file_shapes(tmp_path, text, field):
    path = tmp_path / "bank.yaml"
    path.write_text(text)
    with pytest.raises(BankError) as info:
        load_bank(path)
    assert str(path) in str(info.value)
    assert f"field '{field}'" in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(BankError, match="field 'file': not found"):
        load_bank(tmp_path / "absent.yaml")


def test_repo_paths_are_shown_relative():
    from app.lab.paths import QUIZ_DIR
    err = BankError(QUIZ_DIR / "bank.yaml", [])
    assert err.path == QUIZ_DIR / "bank.yaml"
    from app.quiz.bank import InvalidField
    err = BankError(QUIZ_DIR / "bank.yaml", [InvalidField("'capacity-direct'", "tolerance", "must be a number >= 0")])
    assert str(err) == "quiz/bank.yaml: item 'capacity-direct' field 'tolerance': must be a number >= 0"
