"""A streaming (decoupled) model's check, start to finish, for engine.run_check: measure the
streams (streams.py), judge them (stream_judge.py), and lay them out as the tables every report,
figure and export reads (measure.Tables: one row per request sent in `steps`, so a result's
`requests` counts requests, the phases, the outputs). Codes and values only.

The lab's paged engine (paged_engine.py) adds its part after the streams are judged
(annotate_paged): the engine's evidence of memory pressure and shared prefixes on the staggered
run, and, for each broken stream that did not continue another request's stream, whether the rest
of it is the model's own continuation after its first differing token (a near tie in float
arithmetic leaves that; a state that was not its own does not). That part talks to the server only
to replay those streams' tails alone.
"""
from __future__ import annotations

import pandas as pd

from app.checker.engine import paged_engine
from app.checker.engine.aliases import Values
from app.checker.engine.facts import ModelFacts
from app.checker.engine.inputs import InputSource
from app.checker.engine.options import CheckOptions
from app.checker.engine.sequences.measure import Tables
from app.checker.engine.streaming import faults, stream_diagnosis, stream_judge, streams
from app.checker.engine.target import Target
from app.checker.engine.verdicts import CheckJudgement
from app.lab.progress import Progress

STEP_COLUMNS = ["phase", "pass", "variant", "role", "conversation", "session", "step", "corrid", "t_send", "t_recv", "responses", "ended",
                "error"]
STAGGERED = "stream_staggered"
# Classes whose streams may have changed one token at a near tie: not another request's stream,
# and not a stream that ended early, late, never, or failed.
TIE_CANDIDATES = (stream_diagnosis.OTHER, stream_diagnosis.MIXED)


def run(target: Target, facts: ModelFacts, source: InputSource, options: CheckOptions, progress: Progress | None = None,
        idle_s: float = streams.IDLE_S) -> tuple[Tables, CheckJudgement, streams.StreamTables]:
    measured = streams.measure(target, facts, source, options, progress, idle_s)
    for fault in faults.FAULTS:  # after every judged stream, one at a time: nothing of the check's runs beside it
        if options.faults and options.wants(fault.check):
            measured.faults.append(faults.play(fault.code, target, facts, source, measured, measured.clock, options.state_metric))
    judgement = stream_judge.judge(facts, measured, source, options)
    if isinstance(source, paged_engine.PagedInputs):  # the lab's paged engine: its evidence, and near ties
        annotate_paged(target, facts, source, measured, judgement)
    return tables(facts, options, measured, source, target.where), judgement, measured


def annotate_paged(target: Target, facts: ModelFacts, source: paged_engine.PagedInputs, measured: streams.StreamTables,
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


def tables(facts: ModelFacts, options: CheckOptions, measured: streams.StreamTables, source: InputSource, where: str) -> Tables:
    """One row per request sent (a whole stream): its phase, pass, variant, request (session, with
    step 0), when it was sent and ended, how many responses it got, and its error; the lone
    response counts as the sessions' lengths."""
    rows: list[dict[str, object]] = []
    played = [s for fault in measured.faults if fault.victim is not None for s in (fault.victim, *fault.neighbours)]
    runs = [*(("alone", s) for p in streams.PASSES for s in measured.alone[p]), *(("all_instances", s) for s in measured.staggered),
            *(("all_instances", s) for s in played)]
    for variant, s in runs:
        rows.append({"phase": s.phase, "pass": s.pass_, "variant": variant, "role": s.phase, "conversation": s.request,
                     "session": s.request, "step": 0, "corrid": "", "t_send": s.sent_s, "t_recv": s.ended_s,
                     "responses": len(s.responses), "ended": s.ended, "error": s.error or None})
    outputs = pd.DataFrame([{"name": o.name, "datatype": o.datatype, "compared": o.name in measured.outputs,
                             "ignored_by": "user" if o.name in options.ignore_outputs else (
                                 "lab" if o.name in measured.ignored else "")} for o in facts.outputs],
                           columns=["name", "datatype", "compared", "ignored_by"])
    lengths = [len(s.responses) for s in measured.alone["a"]] or [0]
    return Tables(facts=facts, options=options, steps=pd.DataFrame(rows, columns=STEP_COLUMNS), outputs=outputs,
                  phases=stream_judge.phases_of(measured), skipped=pd.DataFrame(columns=["check", "variant", "reason", "values"]),
                  lengths=lengths, input_source=source.source, where=where, golden=source.golden is not None,
                  data_lengths=[len(s) for s in getattr(source, "sequences", [])])


def to_json(measured: streams.StreamTables) -> dict[str, object]:
    """The report's "streams" section: how the streams were sent and what each one was."""
    return {"requests": measured.requests, "gap_s": round(measured.gap_s, 4), "idle_s": measured.idle_s,
            "alone": {p: [s.to_json() for s in measured.alone[p]] for p in streams.PASSES},
            "staggered": [s.to_json() for s in measured.staggered],
            # "fault": the cancel, as schema 2 first had it; "faults": every fault played, in order
            "fault": next((_fault_json(f) for f in measured.faults if f.fault == faults.CANCEL), None),
            "faults": [_fault_json(f) for f in measured.faults],
            "compared_outputs": list(measured.outputs)}


def _fault_json(fault: faults.FaultRun) -> dict[str, object]:
    return {"fault": fault.fault, "victim": None if fault.victim is None else fault.victim.to_json(),
            "neighbours": [s.to_json() for s in fault.neighbours]}
