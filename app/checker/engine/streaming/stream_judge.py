"""Decide a streaming model's checks from its measured streams: held, broken or skipped. Pure: no server, no words.

The checks are declared in app/checker/engine/checks.py (path STREAM):

  stream_reference  (alone)          each request's stream alone, twice: the same responses, each
                                     within tolerance, the same count, and a final response both times;
  stream_staggered  (all_instances)  each staggered stream against its own lone stream (pass a);
  stream_golden     (alone, all_instances)  each stream against the data file's golden stream
                                     (stream_golden.py); skipped without validation_data;
  stream_finite     (alone, all_instances)  no NaN or Inf in a float output: alone, or appearing
                                     when staggered where alone it answered numbers.

A broken stream check's values hold `stream_diagnosis` {streams: [stream_diagnosis.classify
entries, at most MAX_SHOWN], broken_streams, headline}: each broken request, how its stream went
wrong (another request's state continued, naming it; state lost; ended early or late; never
ended; failed), and where. The verdict's reason is the headline class's diagnosis code
(DIAGNOSIS_OF), and the judgement's diagnoses list one entry per class found. Tolerances come
from the noise between the two lone passes, as compare.tolerance derives them.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from app.checker.engine import compare, witness
from app.checker.engine.aliases import Arrays, Row, Values
from app.checker.engine.checks import ALL_INSTANCES, ALONE
from app.checker.engine.facts import ModelFacts
from app.checker.engine.inputs import InputSource
from app.checker.engine.options import CheckOptions
from app.checker.engine.streaming import stream_diagnosis, stream_golden
from app.checker.engine.streaming.faults import BY_CODE, FaultRun
from app.checker.engine.streaming.stream_diagnosis import Comparer
from app.checker.engine.streaming.streams import ALONE_PHASE, STAGGERED_PHASE, Stream, StreamTables
from app.checker.engine.verdicts import CheckJudgement, CheckVerdict, with_replies_witness, witnessed
from app.lab.json_value import JSON

REFERENCE, STAGGERED, GOLDEN, FINITE = "stream_reference", "stream_staggered", "stream_golden", "stream_finite"
# What a client fault left behind, named with the fault (faults.FaultRun): the model's state gauge
# above its reading before the fault, or Triton still holding requests for the model.
FAULT_DIAGNOSES = ("fault_leaks_state", "fault_leaves_pending")
MAX_SHOWN = 20  # diagnosed streams kept per verdict
SHOWN_ELEMENTS = 8
DIAGNOSIS_OF = {  # a stream class -> the diagnosis code its check's verdict and the judgement carry
    stream_diagnosis.FOREIGN: "stream_foreign_state",
    stream_diagnosis.MIXED: "stream_foreign_state",
    stream_diagnosis.LOST: "stream_lost_state",
    stream_diagnosis.NEVER_ENDED: "stream_never_ended",
    stream_diagnosis.ENDED_EARLY: "stream_ended_early",
    stream_diagnosis.ENDED_LATE: "stream_ended_late",
    stream_diagnosis.FAILED: "stream_failed",
    stream_diagnosis.OTHER: "stream_batch_dependent",
}
STREAM_DIAGNOSES = (*dict.fromkeys(DIAGNOSIS_OF.values()), "stream_not_reproducible", *FAULT_DIAGNOSES)
BROKEN_STEP_COLUMNS = ["check", "variant", "conversation", "session", "step", "role", "output", "difference", "tolerance", "t_send"]


def tolerances(tables: StreamTables, types: dict[str, str], options: CheckOptions) -> list[compare.Tolerance]:
    """Per compared output: the largest difference between the two lone passes (where both gave
    that response), and the tolerance it gives."""
    out = []
    for name in tables.outputs:
        noise = 0.0
        for a, b in zip(tables.alone["a"], tables.alone["b"], strict=True):
            for ra, rb in zip(a.responses, b.responses, strict=False):
                noise = max(noise, compare.difference(ra.get(name), rb.get(name), types[name]))
        out.append(compare.tolerance(name, types[name], noise, options.tolerance))
    return out


def judge(facts: ModelFacts, tables: StreamTables, source: InputSource, options: CheckOptions) -> CheckJudgement:
    types = {o.name: o.datatype for o in facts.outputs if o.name in tables.outputs}
    tols = tolerances(tables, types, options)
    comparer = Comparer(types, {t.output: t.value for t in tols})
    lone = tables.alone["a"]
    refs = dict(enumerate(lone))
    broken_rows: list[Row] = []
    reference = _stream_verdict(REFERENCE, ALONE, tables.alone["b"], lone, refs, comparer, broken_rows, repeat=True,
                                idle_s=tables.idle_s)
    verdicts = [reference]
    if options.wants(STAGGERED):
        if reference.verdict == "broken":
            verdicts.append(CheckVerdict(STAGGERED, ALL_INSTANCES, "skipped", "not_reproducible", {}))
        else:
            staggered = _stream_verdict(STAGGERED, ALL_INSTANCES, tables.staggered, lone, refs, comparer, broken_rows,
                                        gap_s=tables.gap_s, idle_s=tables.idle_s)
            evidence = witness.streams_shared(tables.batch_sizes, _shared(tables.staggered), facts.max_batch_size)
            verdicts.append(witnessed(staggered, evidence))
    for fault in tables.faults:  # the client faults played (faults.FAULTS), each its own check
        verdicts.append(_fault_verdict(fault, tables, lone, refs, comparer, broken_rows, reference))
    if options.wants(GOLDEN):
        verdicts += _golden(tables, source, comparer)
    if options.wants(FINITE):
        verdicts += _finite(tables, types)
    verdicts = [with_replies_witness(v) for v in verdicts]  # the others' witness: the responses they compared
    diagnoses: dict[str, list[str]] = {}
    for v in verdicts:
        if v.verdict != "broken":
            continue
        entries = (v.values.get("stream_diagnosis") or {}).get("streams") or []
        codes = [DIAGNOSIS_OF[c] for c in stream_diagnosis.CLASSES if any(e["class"] == c for e in entries)] or [v.reason]
        if v.check == REFERENCE:
            codes = [v.reason]
        for code in codes:
            diagnoses.setdefault(code, []).append(v.id)
    return CheckJudgement(verdicts, tols, pd.DataFrame(columns=["phase", "variant", "role", "session", "step", "corrid", "error",
                                                                 "cause", "waited_s"]),
                          pd.DataFrame(broken_rows, columns=BROKEN_STEP_COLUMNS),
                          [{"code": c, "checks": ids} for c, ids in diagnoses.items()])


def _stream_verdict(check: str, variant: str, streams: list[Stream], lone: list[Stream], refs: dict[int, Stream], comparer: Comparer,
                    broken_rows: list[Row], repeat: bool = False, gap_s: float | None = None,
                    idle_s: float | None = None) -> CheckVerdict:
    entries = []
    largest = 0.0
    compared = 0
    sent = {s.request: s.sent_s for s in streams}
    for got in streams:
        own = lone[got.request]
        entry = stream_diagnosis.classify(got, own, refs, comparer, sent)
        for r in range(max(len(got.responses), len(own.responses))):
            diffs = comparer.differences(own.responses[r] if r < len(own.responses) else None,
                                         got.responses[r] if r < len(got.responses) else None)
            finite = [d for d in diffs.values() if np.isfinite(d)]
            largest = max([largest, *finite])
            compared += 1
            if entry is not None:
                broken_rows += [{"check": check, "variant": variant, "conversation": got.request, "session": got.request, "step": r,
                                 "role": got.phase, "output": name, "difference": d, "tolerance": comparer.limits[name],
                                 "t_send": got.sent_s} for name, d in diffs.items()]
        if entry is not None:
            entries.append(entry)
    values: Values = {"compared": compared, "sessions": len(streams), "streams": len(streams),
                              "responses": sum(len(s.responses) for s in streams)}
    if idle_s is not None:
        values["idle_s"] = idle_s
    if gap_s is not None:
        values["gap_s"] = round(gap_s, 4)
        values["shared"] = _shared(streams)
    if not entries:
        return CheckVerdict(check, variant, "held", "", {**values, "largest_difference": largest})
    head = stream_diagnosis.headline(entries)
    assert head is not None  # entries are not empty
    reason = DIAGNOSIS_OF[head]
    if repeat and head not in (stream_diagnosis.NEVER_ENDED, stream_diagnosis.FAILED):
        reason = "stream_not_reproducible"
    by_request = {s.request: s for s in streams}  # a fault's neighbours are some requests, not all in order
    first = min(entries, key=lambda e: (by_request[e["request"]].sent_s, e["step"] or 0))
    values["first"] = _first(first, by_request[first["request"]], lone[first["request"]], comparer)
    values["wrong_sessions"] = len(entries)
    values["wrong_steps"] = sum(1 for row in broken_rows if row["check"] == check and row["difference"] > row["tolerance"])
    values["stream_diagnosis"] = {"streams": entries[:MAX_SHOWN], "broken_streams": len(entries), "headline": head}
    return CheckVerdict(check, variant, "broken", reason, values)


def _fault_verdict(fault: FaultRun, tables: StreamTables, lone: list[Stream], refs: dict[int, Stream], comparer: Comparer,
                   broken_rows: list[Row], reference: CheckVerdict) -> CheckVerdict:
    """The client fault's verdict: its neighbours' streams against their lone references (as the
    staggered check compares), then what the fault left behind: state the model's gauge still
    counts (fault_leaks_state) or requests Triton still holds (fault_leaves_pending). Its witness
    is the fault itself (faults.FaultRun.witness)."""
    check = BY_CODE[fault.fault].check
    evidence = fault.witness()
    if fault.victim is None:  # every stream shorter than two responses: no cancel can land half-way, nothing to exercise
        return CheckVerdict(check, ALL_INSTANCES, "skipped", "stream_too_short", {"witness": evidence})
    if reference.verdict == "broken":
        return CheckVerdict(check, ALL_INSTANCES, "skipped", "not_reproducible", {"witness": evidence})
    verdict = _stream_verdict(check, ALL_INSTANCES, fault.neighbours, lone, refs, comparer, broken_rows, idle_s=tables.idle_s)
    values = {**verdict.values, "fault": fault.fault}
    if verdict.verdict == "held" and fault.exercised and (fault.leaked_state or fault.pending_left):
        reason = "fault_leaks_state" if fault.leaked_state else "fault_leaves_pending"
        return CheckVerdict(check, ALL_INSTANCES, "broken", reason, {**values, "witness": evidence})
    return witnessed(CheckVerdict(check, ALL_INSTANCES, verdict.verdict, verdict.reason, values), evidence)


def _shared(streams: list[Stream]) -> int:
    """Streams that were generating while another one was: the staggered run reached its aim."""
    spans = [(s.sent_s, s.ended_s if s.ended_s is not None else (s.times[-1] if s.times else s.sent_s)) for s in streams]
    return sum(1 for i, (a0, a1) in enumerate(spans) if any(j != i and b0 < a1 and a0 < b1 for j, (b0, b1) in enumerate(spans)))


def _first(entry: Values, got: Stream, own: Stream, comparer: Comparer) -> Values:
    """Where the first broken stream first went wrong: its request, response, output, difference, tolerance, first elements."""
    step = entry["step"] if entry["step"] is not None else 0
    ref = own.responses[step] if step < len(own.responses) else None
    have = got.responses[step] if step < len(got.responses) else None
    diffs = comparer.differences(ref, have)
    output = next((n for n, d in diffs.items() if d > comparer.limits[n]), next(iter(diffs), ""))
    return {"session": got.request, "step": step, "class": entry["class"], "output": output,
            "difference": diffs.get(output), "tolerance": comparer.limits.get(output), "phase": got.phase, "role": got.phase,
            "corrid": "", "shown": {"expected": _shown(ref, output), "got": _shown(have, output)}}


def _shown(response: Arrays | None, output: str) -> list[JSON] | None:
    if response is None or response.get(output) is None:
        return None
    values = np.asarray(response[output]).reshape(-1)[:SHOWN_ELEMENTS]
    return [v.decode(errors="replace") if isinstance(v, bytes) else (str(v) if isinstance(v, float) and not np.isfinite(v) else v)
            for v in values.tolist()]


def _golden(tables: StreamTables, source: InputSource, comparer: Comparer) -> list[CheckVerdict]:
    runs = ((ALONE, tables.alone["a"]), (ALL_INSTANCES, tables.staggered))
    if stream_golden.golden_stream(source, 0) is None:
        return [CheckVerdict(GOLDEN, variant, "skipped", "no_golden_data", {}) for variant, _ in runs]
    out = []
    for variant, streams in runs:
        wrong = []
        compared = 0
        largest = 0.0
        for got in streams:
            golden = stream_golden.golden_stream(source, got.request)
            if golden is None:
                continue
            count = min(len(a) for a in golden.values()) if golden else 0
            expected = [{name: array[r] for name, array in golden.items()} for r in range(count)]
            mine = Comparer({n: t for n, t in comparer.types.items() if n in golden}, comparer.limits)
            compared += 1
            bad = mine.first_wrong(got.responses, expected)
            if bad is None:
                for r in range(count):
                    largest = max([largest, *(d for d in mine.differences(expected[r], got.responses[r]).values() if np.isfinite(d))])
                continue
            ref = expected[bad] if bad < count else None
            have = got.responses[bad] if bad < len(got.responses) else None
            diffs = mine.differences(ref, have)
            output = next((n for n, d in diffs.items() if d > mine.limits[n]), next(iter(diffs), ""))
            wrong.append({"session": got.request, "step": bad, "stream": got.request, "output": output, "difference": diffs.get(output),
                          "tolerance": mine.limits.get(output), "phase": got.phase, "role": got.phase, "corrid": "",
                          "responses": len(got.responses), "expected": count,
                          "shown": {"expected": _shown(ref, output), "got": _shown(have, output)}})
        if not compared:
            out.append(CheckVerdict(GOLDEN, variant, "skipped", "no_golden_steps", {}))
        elif wrong:
            out.append(CheckVerdict(GOLDEN, variant, "broken", "differs_from_golden",
                                    {"compared": compared, "sessions": len(streams), "wrong_sessions": len(wrong),
                                     "wrong_steps": len(wrong), "first": wrong[0]}))
        else:
            out.append(CheckVerdict(GOLDEN, variant, "held", "", {"compared": compared, "sessions": len(streams),
                                                                 "largest_difference": largest}))
    return out


def _non_finite(response: Arrays, types: dict[str, str]) -> list[str]:
    return [n for n, t in types.items() if compare.non_finite(response.get(n), t)]


def _finite(tables: StreamTables, types: dict[str, str]) -> list[CheckVerdict]:
    if not any(compare.is_float(t) for t in types.values()):
        return [CheckVerdict(FINITE, v, "skipped", "no_float_outputs", {}) for v in (ALONE, ALL_INSTANCES)]
    out = []
    lone = tables.alone["a"]
    for variant, streams in ((ALONE, [*lone, *tables.alone["b"]]), (ALL_INSTANCES, tables.staggered)):
        wrong = []
        compared = 0
        already = 0
        for got in streams:
            for r, response in enumerate(got.responses):
                compared += 1
                bad = _non_finite(response, types)
                if not bad:
                    continue
                if variant == ALL_INSTANCES:
                    own = lone[got.request].responses
                    if r < len(own) and _non_finite(own[r], types):
                        already += 1
                        continue
                wrong.append({"session": got.request, "step": r, "output": bad[0], "difference": None, "tolerance": None,
                              "phase": got.phase, "role": got.phase, "corrid": "", "shown": {"got": _shown(response, bad[0])}})
        values: Values = {"compared": compared, "sessions": len(streams)}
        if variant == ALL_INSTANCES:
            values["non_finite_alone"] = already
        if wrong:
            out.append(CheckVerdict(FINITE, variant, "broken", "non_finite",
                                    {**values, "wrong_steps": len(wrong), "wrong_sessions": len({w["session"] for w in wrong}),
                                     "first": wrong[0]}))
        else:
            out.append(CheckVerdict(FINITE, variant, "held", "", values))
    return out


def phases_of(tables: StreamTables) -> pd.DataFrame:
    """The measured phases as the report's phases table has them."""
    return tables.phases.assign(model=None, workers=1, capacity=None, overflow=None, traced=False, placed=False)


__all__ = ["ALONE_PHASE", "STAGGERED_PHASE", "judge", "tolerances", "phases_of", "STREAM_DIAGNOSES"]
