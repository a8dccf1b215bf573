"""The dynamic-batcher checks on the real server: each holds on a pure model and breaks on one
that depends on its batch or on its history."""
from __future__ import annotations

import numpy as np

from tests.checker.conftest import verdicts, zoo_fixture

zoo = zoo_fixture("zoo_stateless", "zoo_batch_dependent", "zoo_batch_stats", "zoo_stateful_dynamic", "zoo_noisy", "zoo_all_types")
HELD = {"repeat_alone/alone": "held", "batch_composition/all_instances": "held", "after_traffic/alone": "held",
        "golden/alone": "skipped", "golden/all_instances": "skipped",  # no data file: no golden outputs to compare with
        "finite/alone": "held", "finite/all_instances": "held"}


def test_a_pure_model_holds_every_check(zoo):
    result = zoo.check("zoo_stateless")
    assert verdicts(result) == HELD and result.exit_code == 0
    concurrent = result.tables.steps[result.tables.steps["phase"] == "concurrent"]
    sizes = concurrent.groupby("execution").size()
    assert sizes.max() > 1 and sizes.nunique() > 1, sizes.value_counts().to_dict()  # batches of several compositions formed
    # lanes pack executions that overlapped in time: never more than the model's two instances
    assert 1 <= concurrent["lane"].nunique() <= 2


def test_every_datatype_is_generated_and_compared(zoo):
    result = zoo.check("zoo_all_types")
    assert verdicts(result) == HELD
    compared = set(result.tables.outputs[result.tables.outputs["compared"]]["datatype"])
    assert compared == {"BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64", "FP16", "BF16", "FP32",
                        "FP64", "BYTES"}
    assert {t.source for t in result.judgement.tolerances if t.datatype in ("FP16", "BF16", "FP32", "FP64")} == {"derived"}


def test_an_answer_that_changes_with_its_batch_breaks_batch_composition_only(zoo):
    result = zoo.check("zoo_batch_dependent")
    v = verdicts(result)
    assert v["repeat_alone/alone"] == "held" and v["after_traffic/alone"] == "held"
    broken = result.judgement.verdict("batch_composition", "all_instances")
    assert (broken.verdict, broken.reason) == ("broken", "batch_dependent")
    execution = broken.values["first"]["execution"]
    assert execution["batch"] > 1 and len(execution["shared_with"]) == min(execution["batch"] - 1, 12)
    # this model adds its batch size: the difference is the batch it ran in, less the one it had alone
    assert broken.values["first"]["difference"] == execution["batch"] - 1
    assert result.judgement.diagnoses == [{"code": "batch_dependent", "checks": ["batch_composition/all_instances"]}]


def test_state_learnt_from_batches_breaks_the_lone_requests_after_traffic(zoo):
    result = zoo.check("zoo_batch_stats")
    assert result.judgement.verdict("repeat_alone").verdict == "held"
    after = result.judgement.verdict("after_traffic")
    assert (after.verdict, after.reason) == ("broken", "keeps_state")
    assert {d["code"] for d in result.judgement.diagnoses} == {"keeps_state", "batch_dependent"}


def test_a_stateful_model_behind_the_dynamic_batcher_belongs_under_the_sequence_batcher(zoo):
    result = zoo.check("zoo_stateful_dynamic")
    broken = result.judgement.verdict("repeat_alone")
    assert (broken.verdict, broken.reason) == ("broken", "keeps_state")
    assert broken.values["wrong_sessions"] > 1
    assert {v.verdict for v in result.verdicts[1:] if v.check in ("batch_composition", "after_traffic")} == {"skipped"}
    assert result.exit_code == 1


def test_float_noise_holds_within_the_derived_tolerance(zoo):
    result = zoo.check("zoo_noisy")
    assert verdicts(result) == HELD
    (score,) = result.judgement.tolerances
    assert score.source == "derived" and score.noise > 0 and np.isclose(score.value, 4 * score.noise)
    assert result.judgement.verdict("batch_composition").values["largest_difference"] > 0
