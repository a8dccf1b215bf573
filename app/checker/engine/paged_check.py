"""The paged engine's part of a stream check (paged_engine.py), after the streams are judged: the
engine's evidence of memory pressure and shared prefixes on the staggered run, and, for each
broken stream that did not continue another request's stream, whether the rest of it is the
model's own continuation after its first differing token (a near tie in float arithmetic leaves
that; a state that was not its own does not). Codes and values only; it talks to the server only
to replay those streams' tails alone.
"""
from __future__ import annotations

from app.checker.engine import paged_engine, stream_diagnosis
from app.checker.engine.aliases import Values
from app.checker.engine.facts import ModelFacts
from app.checker.engine.judge import CheckJudgement
from app.checker.engine.streams import StreamTables
from app.checker.engine.target import Target

STAGGERED = "stream_staggered"
# Classes whose streams may have changed one token at a near tie: not another request's stream,
# and not a stream that ended early, late, never, or failed.
TIE_CANDIDATES = (stream_diagnosis.OTHER, stream_diagnosis.MIXED)


def annotate(target: Target, facts: ModelFacts, source: paged_engine.PagedInputs, measured: StreamTables,
             judgement: CheckJudgement) -> None:
    """Add `engine` (paged_engine.evidence) to the staggered verdict's values and, where it broke,
    `own_continuation` to each diagnosed stream that may be a near tie, and `near_tie` {scores:
    false (the outputs carry none), own_continuation: [requests], not_own: [requests]} beside."""
    try:
        verdict = judgement.verdict(STAGGERED)
    except KeyError:
        return
    verdict.values["engine"] = paged_engine.evidence(facts, source, measured.staggered)
    if verdict.verdict != "broken":
        return
    entries: list[Values] = (verdict.values.get("stream_diagnosis") or {}).get("streams") or []
    own: list[int] = []
    not_own: list[int] = []
    for entry in entries:
        if entry["class"] not in TIE_CANDIDATES or entry.get("step") is None:
            continue
        prompt, _ = source.request(entry["request"])
        got = paged_engine.stream_tokens(measured.staggered[entry["request"]])
        result = paged_engine.replay_tail(target.server.grpc_url, facts.name, prompt, got, int(entry["step"]))
        entry["own_continuation"] = result
        if result is True:
            own.append(entry["request"])
        elif result is False:
            not_own.append(entry["request"])
    verdict.values["near_tie"] = {"scores": False, "own_continuation": own, "not_own": not_own}
