"""The checker on the lab's paged engine (model_repository/kv_engine): requests it can take, built from
its metadata; every stream alone, then all at once past its cache with a shared prefix, compared
token by token; the engine's evidence in the report, which validates against the shipped schema;
and the replay that tells a stream's own continuation from one that is not."""
from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pytest

from app.checker.engine import CheckOptions, paged_engine, report_schema, run
from app.checker.engine import target as targets
from app.checker.engine.facts import ModelFacts
from app.checker.engine.reports import report
from app.checker.engine.verdicts import CheckVerdict
from app.checker.words import streams as stream_words
from app.generation.paged.engine import MODEL, PagedSettings, PagedWorkload, alone, ensure
from app.i18n import languages, words
from app.lab.deployment import deployments
from tests.i18n.text_checks import reads_in


def shipped_facts() -> ModelFacts:
    """kv_engine's facts as the server would give them, from the shipped config alone."""
    config = json.loads(deployments.to_json(deployments.read_config(MODEL)))

    def tensors(kind: str) -> list[dict[str, object]]:
        return [{"name": t["name"], "datatype": t["data_type"].removeprefix("TYPE_"), "shape": [int(d) for d in t["dims"]]}
                for t in config[kind]]

    return ModelFacts.read(config, {"inputs": tensors("input"), "outputs": tensors("output")})


def test_the_checker_knows_the_shipped_engine_by_its_inputs_and_outputs():
    facts = shipped_facts()
    assert paged_engine.is_paged(facts)
    assert {t.name for t in facts.outputs} == {*paged_engine.ANSWERS, *paged_engine.PLACEMENT}
    text = deployments.PAGED_ENGINE_CODE[0].read_text()  # model.py
    assert re.search(rf"^MAX_TOKENS_LIMIT = {paged_engine.MAX_TOKENS_LIMIT}$", text, re.M)


def test_generated_requests_share_a_prefix_stay_in_range_and_outnumber_the_cache():
    facts = shipped_facts()
    blocks, size = paged_engine.cache_tokens(facts)
    count = paged_engine.request_count(facts, None)
    source = paged_engine.paged_inputs(facts, count, seed=0)
    demand = 0
    for i in range(count):
        arrays = source.arrays(i, 0)
        prompt, max_tokens = arrays["PROMPT"].tolist(), int(arrays["MAX_TOKENS"][0])
        assert prompt[: paged_engine.PREFIX_BLOCKS * size] == list(source.prefix)
        assert 1 <= max_tokens <= paged_engine.MAX_TOKENS_LIMIT and arrays["PROMPT"].dtype == np.int32
        demand += len(prompt) + max_tokens
    assert demand > blocks * size
    used = source.used()  # the report's sizes are the prompts' lengths as sent, prefix included
    lengths = [len(source.request(i)[0]) for i in range(count)]
    assert used.sizes is not None and (used.sizes.low, used.sizes.high) == (min(lengths), max(lengths))
    assert paged_engine.request_count(facts, 5) == 5


def test_a_cache_too_small_for_the_usual_request_gets_requests_that_fit_it():
    facts = shipped_facts()
    config = {**facts.config, "parameters": {"num_blocks": {"string_value": "4"}, "block_size": {"string_value": "4"}}}
    small = replace(facts, config=config)
    source = paged_engine.paged_inputs(small, 12, seed=0)
    assert len(source.prefix) == 2 * 4  # two of its four blocks
    for i in range(12):
        prompt, max_tokens = source.request(i)
        assert prompt[: len(source.prefix)] == list(source.prefix) or len(prompt) < len(source.prefix)
        assert len(prompt) + max_tokens <= 16 and max_tokens >= 1


@pytest.fixture(scope="module")
def kv_report(lab_server):
    """kv_engine checked once with the defaults, and its report as the file holds it."""
    lab_server.models.ensure(MODEL)
    result = run.run_check(targets.on_server(lab_server, MODEL), CheckOptions())
    return result, json.loads(json.dumps(report.to_json(result), default=str))


def test_the_shipped_engine_holds_alone_and_under_memory_pressure_with_a_shared_prefix(kv_report):
    result, data = kv_report
    report_schema.validate(data)
    outcome = {f"{c['check']}/{c['variant']}": c["verdict"] for c in data["checks"]}
    assert outcome["stream_reference/alone"] == "held" and outcome["stream_staggered/all_instances"] == "held"
    assert result.exit_code == 0
    compared = set(result.tables.outputs[result.tables.outputs["compared"]]["name"])
    assert compared == set(paged_engine.ANSWERS)
    engine = result.judgement.verdict("stream_staggered").values["engine"]
    assert engine["pressure"] and engine["demand_tokens"] > engine["cache_tokens"]
    assert engine["most_waiting"] > 0  # the cache made requests wait
    assert engine["requests_with_prefix_from_cache"] > 0
    assert all(s["ended"] and not s["error"] for s in data["streams"]["staggered"])


def test_a_stream_that_is_the_models_own_continuation_is_told_from_one_that_is_not(lab_server):
    settings = PagedSettings()
    model = ensure(lab_server, settings)
    plan = PagedWorkload(requests=1, system_tokens=0, min_answer_tokens=16, max_answer_tokens=16, seed=2).plan()[0]
    tokens = alone(lab_server, settings, [plan])[plan.index]
    prompt = list(plan.prompt)
    assert paged_engine.replay_tail(lab_server.grpc_url, model, prompt, tokens, 5) is True
    changed = [*tokens[:10], (tokens[10] + 1) % paged_engine.VOCAB, *tokens[11:]]
    assert paged_engine.replay_tail(lab_server.grpc_url, model, prompt, changed, 5) is False
    assert paged_engine.replay_tail(lab_server.grpc_url, model, prompt, tokens, len(tokens) - 1) is None


@pytest.mark.parametrize("lang", languages())
def test_the_words_say_the_engines_evidence_and_a_near_tie_apart_from_a_state_not_its_own(lang):
    _ = words(lang)
    held = CheckVerdict("stream_staggered", "all_instances", "held", "", {
        "streams": 24, "responses": 300, "largest_difference": 0.0, "gap_s": 0.002, "shared": 24,
        "engine": {"demand_tokens": 1267, "cache_tokens": 1024, "most_waiting": 8, "requests_with_prefix_from_cache": 24}})
    plain_verdict = replace(held, values={k: v for k, v in held.values.items() if k != "engine"})

    def engine_part(lang_words):
        """What the engine's evidence adds to the verdict's sentence."""
        sentence = stream_words.verdict_sentence(held, lang_words)
        plain = stream_words.verdict_sentence(plain_verdict, lang_words)
        assert sentence.startswith(plain) and sentence != plain
        return sentence[len(plain):]

    assert "1,267" in engine_part(_) and "1,024" in engine_part(_)
    assert reads_in(lang, engine_part(_), engine_part(words("en")))
    entry = {"request": 2, "class": "other", "step": 4, "responses": 12, "expected": 12, "matched": 0, "compared": 0}
    plain = stream_words.diagnosed_stream(entry, _)
    own = stream_words.diagnosed_stream({**entry, "own_continuation": True}, _)
    not_own = stream_words.diagnosed_stream({**entry, "own_continuation": False}, _)
    assert own.startswith(plain) and not_own.startswith(plain) and len({plain, own, not_own}) == 3
    assert reads_in(lang, own[len(plain):], stream_words.CONTINUATION[True])
    assert reads_in(lang, not_own[len(plain):], stream_words.CONTINUATION[False])
