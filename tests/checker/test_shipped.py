"""The checker on the lab's own deployments: the mistake and the two wrong set-ups break, the fixes pass,
with no option given (the lab knows the recogniser's placement outputs)."""
from __future__ import annotations

import pytest

from app.checker.engine import CheckOptions, run
from app.checker.engine import target as targets
from app.recogniser.engine import presets
from tests.checker.conftest import TEST_STEPS, check_copies_gone, unload, verdicts


@pytest.fixture(scope="module")
def shipped(lab_server):
    """Each shipped deployment checked once with the defaults, on all its instances (the copy is
    exercised on the zoo; these 5 s idle timeouts make each abandon round ~6 s)."""
    cache = {}

    def check(model: str, **options):
        if model not in cache:
            lab_server.models.ensure(model)
            cache[model] = run.run_check(targets.on_server(lab_server, model), CheckOptions(steps=TEST_STEPS, one_instance=False, **options))
        return cache[model]
    return check


@pytest.fixture(scope="module")
def set_ups(lab_server, deployer):
    """The lab's "forgot READY" and "oldest done wrong" set-ups, loaded for this module."""
    names = {name: deployer.apply(presets.get(name).settings).model for name in ("forgot_ready", "oldest_wrong")}
    try:
        yield names
    finally:
        unload(lab_server, list(names.values()))  # the lab's bookkeeping reloads them if anyone asks again


def test_the_mistake_is_reported_broken_for_its_history_dependence(shipped):
    result = shipped("asr_dynamic")
    broken = result.judgement.verdict("repeat_alone")
    assert (broken.verdict, broken.reason) == ("broken", "keeps_state")
    assert broken.values["first"]["output"] in ("SYMBOL", "STATE_IN", "STATE_OWNER")
    assert set(result.tables.outputs[~result.tables.outputs["compared"]]["name"]) == {"INSTANCE", "SLOT", "BATCH"}
    assert result.judgement.diagnoses == [{"code": "keeps_state", "checks": ["repeat_alone/alone"]}]


@pytest.mark.parametrize("model", ["asr_sequence_direct", "asr_sequence_oldest"])
def test_the_fixes_pass(shipped, model):
    result = shipped(model)
    got = verdicts(result)
    # Short test sessions (TEST_STEPS) against a 5 s idle timeout: the slot holders may end before the reaper
    # frees the abandoned slot, and then no follower lands there; the witness says so (not exercised), never held.
    aborts = {k: got[k] for k in ("abandoned/all_instances", "cancelled/all_instances")}
    assert set(aborts.values()) <= {"held", "not_exercised"}, aborts
    assert got == {
        "reference/alone": "held", "interleaved/all_instances": "held", "id_reuse/all_instances": "held",
        **aborts, "slow_client/all_instances": "held", "interleaved/one_instance": "skipped",
        "id_reuse/one_instance": "skipped", "abandoned/one_instance": "skipped", "cancelled/one_instance": "skipped",
        **{f"{c}/{v}": "skipped" for c in ("golden", "finite") for v in ("alone", "all_instances", "one_instance")}}  # integers only
    assert result.exit_code == (3 if "not_exercised" in aborts.values() else 0)
    assert all(result.judgement.verdict(*k.split("/")).values["witness"]["why"] == "slot_not_reused"
               for k, x in aborts.items() if x == "not_exercised")
    assert result.judgement.verdict("interleaved", "all_instances").values["overflow"] is True
    assert result.facts.idle_timeout_us == 5_000_000


@pytest.mark.parametrize("preset", ["forgot_ready", "oldest_wrong"])
def test_the_wrong_set_ups_break_with_the_first_diverging_step_named(lab_server, set_ups, preset):
    model = set_ups[preset]
    result = run.run_check(targets.on_server(lab_server, model), CheckOptions(steps=TEST_STEPS, only=("interleaved",)))
    broken = result.judgement.verdict("interleaved", "all_instances")
    assert (broken.verdict, broken.reason) == ("broken", "sessions_mix")
    first = broken.values["first"]
    assert first["step"] >= 1 and first["output"] in ("SYMBOL", "STATE_IN", "STATE_OWNER") and first["difference"] > 0
    assert first["instance"].startswith(model)
    # the lab has the recogniser's code, so it made and removed a one-instance copy of the set-up
    assert result.judgement.verdict("interleaved", "one_instance").verdict == "broken"
    assert check_copies_gone(lab_server) == []
