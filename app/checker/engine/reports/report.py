"""A check's report as JSON (codes and values, versioned like the run report) and the tables the
page's figures draw. Words for every code are in app/checker/words/ (labels.py).

JSON schema (kind "check", schema 2; schemas/check-report-2.schema.json, schema 1's file still shipped):
  {"kind": "check", "schema": 2, "outcome": "held" | "broken" | "not_exercised", "exit_code": 0 | 1 | 3,
   "failed_by": ["checks" (a verdict broke), "review" (an error-level review finding, unless options.allow_review_errors),
     "not_exercised" (a check not exercised, with options.not_exercised_exit 1)],
   "not_exercised": [check/variant] (held without their witness: verdict not_exercised; exit 3 unless
     options.not_exercised_exit says 0 or 1), and "routing" where routing.diagnosis is not_exercised,
   "server": {where: embedded | external, url, triton_version (what it reported, which the review used; null: none)},
   "model": ModelFacts.to_json(), "options": CheckOptions.to_json(),
   "inputs": {source: generated | data_file, sessions, lengths: [steps per session],
     sizes: {low, high, per: request | run} | null (the sizes drawn where no --shape sized a variable
       dimension: low..high elements, anew per session and step, or one for the whole check),
     shapes: [{name, dims (the model's, -1 variable), sized_by: model | shape | data_file | drawn,
       smallest, largest (element-wise, over the requests sent, without the batch dimension)}],
     streams: [steps per data stream] (session i plays stream i % len), golden: the file has validation_data},
   "wall_s", "requests", "traced" (the trace was read), "placed" (the log placed sequences in slots),
   "declared": [{check, judged_by: reference | golden | finite, diagnosis, variants}] (app/checker/engine/checks.py,
     the model's path: what each check judges against and what its breaking means),
   "checks": [{check, variant, verdict: held | broken | skipped | not_exercised, reason, judged_by, values}],
     values.witness (batch_composition, stream_staggered, stream_cancelled, stream_disconnected; app/checker/engine/witness.py, faults.py):
       {source: statistics | metrics, exercised, why (not_exercised's reason: no_batch_formed | no_stream_overlap |
       no_statistics | ended_before_cancel), advice: cannot_batch | more_load | longer_streams | null, and per kind:
       batch_sizes {size: executions}, largest_batch, executions, max_batch_size, overlapping (streams in flight together);
       the fault's: fault (cancel_mid_stream | disconnect_mid_stream), victim, cancelled_after, cancel_s, neighbours, pending_before/after,
       state_metric, state_before/after, settled_s, settle_s, freed: at_once | later | never};
     stream_cancelled, stream_disconnected broken: reason fault_leaks_state | fault_leaves_pending, or a stream diagnosis of a neighbour;
     slow_client's witness (source log | client): fault slow_client, idle_timeout_s, quiet_s, reaped_logged, late_refused, refusal,
       restarted_matched, neighbours, pending_before/after, state_metric, state_before/after, settled_s, settle_s;
       why not_reaped | late_step_failed; broken: slow_client_keeps_state | slow_client_leaks_state | slow_client_leaves_pending;
     values: compared, sessions, refusals, refusal_causes {cause: n}; held: largest_difference, largest_output;
     broken: wrong_steps, wrong_sessions, first {session, step, corrid, role, phase, output, difference,
       tolerance, t_send, shown {expected, got: first elements}, instance, slot,
       execution {id, lane, start_s, end_s, batch, shared_with [{session, step, role, corrid}]}};
     first elements are plain values: bytes as text, NaN and Inf as "nan", "inf", "-inf";
     golden: tolerances {output: value} (0: exact), wrapped_streams [streams], uncompared_steps (the sequence
       path's wrapped steps, not compared); broken: first.stream, first.shown {expected: golden, got};
     finite: broken: first.shown {got}, first.difference and tolerance null; traffic variants: non_finite_alone
       (replies already non-finite in the lone runs, not counted again);
     per check: interleaved {capacity, in_flight, overflow}; id_reuse {reused, same_instance, same_slot};
     abandoned/cancelled {next_on_slot, victim_instance, victim_slot, victim_ended_by: end | reaped | cancelled,
       idle_timeout_s}, cancelled {cancel_outcome: gave_up | served | refused | failed, cancel_error, cancel_reached: true | false | null
       (null: untraced)};
     broken interleaved/id_reuse/abandoned/cancelled: diagnosis {sessions [{conversation, session, corrid, role,
       step (where it first diverged), instance, slot (the log's), class: lost | stale | foreign | other, matched, compared (replayed steps
       that matched / were compared from step on), tried (hypotheses replayed), form (foreign: replace | sent |
       given_up | mix; stale: last | instance | all), source {conversation, session, corrid, role, instance, slot,
       ended_before} (foreign and stale)}], broken_sessions, diagnosed, replayed (requests),
       advice: lost_state | stale_state | foreign_state_oldest | foreign_state_direct | null (other: the reason),
       caps {sessions, sources, hypotheses, steps, requests}} (app/checker/engine/sequences/diagnosis.py);
     with refusals: first_refusal {session, step, corrid, role, phase, cause, error}, refusal_diagnosis (a code below);
     broken: reason is a diagnosis code (not_reproducible, noise_above_tolerance, non_finite, keeps_state,
       batch_dependent, sessions_mix, inherits_after_end, aborted_pollutes, differs_from_golden), or, where every
       compared reply matched (or none was compared) but requests were refused, the refusal's: sequence_split (a
       request reached a server with no record of its sequence), reaped (the idle reaper ended it), requests_refused
       (the server refused or did not answer); a refused request is never a held session;
     skipped: reason is a code (not_reproducible, reference_non_finite, not_requested, single_instance,
       external_server, no_model_files, copy_refused, sessions_too_short, nothing_compared,
       cancel_not_delivered, idle_timeout_long {idle_timeout_s, limit_s}, no_golden_data (golden not run: no validation_data), no_golden_steps,
       no_float_outputs, response_cache {cache_hits, requests}, response_cache_unknown) with its values
   "tolerances": [{output, datatype, value, source: exact | user | derived, noise, reproducible}],
   "outputs": [{name, datatype, compared, ignored_by: "" | user | lab}],
   "diagnoses": [{code, checks}] (code: a broken check's reason, or its diagnosis's advice where it has one),
   "notes": [{code, values}] (streams_wrap {streams, stream_lengths, steps, golden}:
     data streams shorter than their sessions, whose later steps replay earlier inputs),
   "refusals": [{phase, variant, role, session, step, corrid, error, cause, waited_s}],
   "phases": [{phase, variant, model, started_s, wall_s, requests, workers, capacity, overflow, traced, placed}],
   "review": [{code, severity, field, values}] (the config review, app/checker/engine/review/),
   "streams": null, or for a decoupled model (app/checker/engine/streaming/stream_check.py) {requests, gap_s (between staggered
     arrivals), idle_s (a silent stream is given up after), compared_outputs, alone {a, b: [stream]}, staggered [stream],
     fault: null | {fault, victim: stream | null, neighbours [stream]} (the cancel), faults: [the same, one per fault
     played]} (a stream's responses may be 0: the final flag alone),
     stream {request, phase, pass, sent_s, responses, ended, given_up: idle | too_long | cancelled | disconnected | null, error,
     duration_s};
     its checks (stream_reference, stream_staggered, stream_golden, stream_finite) count requests in values.sessions and
     responses in values.compared; broken stream_reference/stream_staggered: values.stream_diagnosis {streams [{request,
       class: foreign | mixed | lost | never_ended | ended_early | ended_late | failed | other, step (first wrong response),
       responses, expected, matched, compared, source {request, step} | null, origins [{response, request?, step?, among?}],
       outputs (mixed), given_up (never_ended), error (failed)}], broken_streams, headline}, first, gap_s, shared, idle_s
       (app/checker/engine/streaming/stream_diagnosis.py, stream_judge.py); reason and diagnoses codes: stream_foreign_state,
       stream_lost_state, stream_never_ended, stream_ended_early, stream_ended_late, stream_failed,
       stream_batch_dependent, stream_not_reproducible}
   "routing": null, or through a balancer (--replica, app/checker/engine/routing.py): {balancer, transport, session_header,
     replicas: [{url, served_before, served_after, served (successful inferences its statistics counted during the run
       through the balancer; null: not said), sequences (correlation IDs its log named then; null: its log not read)}],
       diagnosis: balancer_splits_sequences | balancer_breaks | model_breaks | held | not_exercised | direct_only_broke,
       split_checks: [check/variant], witness (app/checker/engine/routing.py): {source: log | statistics, exercised
       (two replicas or more served), why: one_replica_served | no_statistics | null, advice: spread_replicas | null,
       replicas_serving, sequences_placed, sequences_split (correlation IDs the replicas' logs named, and those two or
       more named; null where not every log was read)}, direct: {replica, transport, exit_code, failed_by, requests,
       checks: [{check, variant, verdict, reason}]} (the same check directly on the first replica)}}
Sessions, streams and steps count from 0; times are seconds from the check's start.
"""
from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

import pandas as pd

from app.checker.engine import checks, review
from app.checker.engine.review import ReviewFinding
from app.checker.engine.streaming import stream_check, stream_judge, streams
from app.checker.engine.verdicts import CheckVerdict, jsonable

if TYPE_CHECKING:
    from app.checker.engine.run import CheckResult

KIND = "check"
REVIEW_KIND = "check_config"  # `check --config`: the offline review alone
SCHEMA = 2  # 2: the not_exercised verdict and outcome, exit 3, each witnessed check's values.witness


def review_to_json(findings: dict[str, list[ReviewFinding]], triton_version: str | None = None) -> dict[str, object]:
    """The offline review's findings per model ({model: [ReviewFinding]}), versioned like the report,
    with the Triton version it reviewed for (None: none stated, so the checks that depend on it
    are NOT_CHECKED)."""
    return {"kind": REVIEW_KIND, "schema": SCHEMA, "triton_version": triton_version,
            "models": {m: [f.to_json() for f in fs] for m, fs in findings.items()}}


def review_exit_code(findings: dict[str, list[ReviewFinding]]) -> int:
    """1 when any finding is an error, else 0: the offline review's exit status."""
    return 1 if any(f.severity == review.Severity.ERROR for fs in findings.values() for f in fs) else 0


def to_json(result: CheckResult) -> dict[str, object]:
    t = result.tables
    j = result.judgement
    return {
        "kind": KIND,
        "schema": SCHEMA,
        "outcome": result.outcome,
        "exit_code": result.exit_code,
        "failed_by": result.failed_by,
        "not_exercised": result.not_exercised,
        "server": {"where": result.where, "url": result.url, "triton_version": result.triton_version},
        "model": result.facts.to_json(),
        "options": result.options.to_json(),
        "inputs": {"source": t.input_source, "sessions": len(t.lengths), "lengths": list(t.lengths), "streams": list(t.data_lengths),
                   "golden": t.golden, **result.inputs.to_json()},
        "wall_s": round(result.wall_s, 3),
        "requests": result.requests,
        "traced": t.traced,
        "placed": t.placed,
        "declared": [{"check": c.code, "judged_by": c.judged_by, "diagnosis": c.diagnosis, "variants": list(c.variants)}
                     for c in checks.for_path(_path(result))],
        "checks": [{**v.to_json(), "judged_by": judged_by(v, _path(result))} for v in j.verdicts],
        "tolerances": [tol.to_json() for tol in j.tolerances],
        "outputs": _records(t.outputs),
        "diagnoses": jsonable(j.diagnoses),
        "notes": jsonable(j.notes),
        "refusals": _records(j.refusals.drop(columns=["row"], errors="ignore")),
        "phases": _records(t.phases),
        "review": [f.to_json() for f in result.review],
        "streams": stream_check.to_json(result.streams) if result.streams is not None else None,
        "routing": result.routing.to_json() if result.routing is not None else None,
    }


def _path(result: CheckResult) -> str:
    return checks.path_of(result.facts.sequence, result.facts.decoupled)


def judged_by(verdict: CheckVerdict, sequence: bool | str) -> str:
    """What the verdict's check compares replies with (checks.Check.judged_by)."""
    return checks.get(verdict.check, sequence).judged_by


def dumps(result: CheckResult) -> str:
    return json.dumps(to_json(result), indent=1, default=str)


def _records(frame: pd.DataFrame) -> list[object]:
    return [jsonable({k: (None if _missing(v) else v) for k, v in row.items()}) for row in frame.to_dict(orient="records")]


def _missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


# -- tables for the page's figures -----------------------------------------------------------
TIMELINE_COLUMNS = ["phase", "variant", "lane", "instance", "slot", "execution", "exec_start", "exec_end", "session", "step",
                    "conversation", "role", "corrid", "diverged"]


def timeline(result: CheckResult, variant: str | None = None) -> pd.DataFrame:
    """Executions over time from the trace: one row per traced request, `lane` (the instance where
    the log said, else a packed lane) for the figure's rows, `session` for its colour, and
    `diverged` marking the steps beyond tolerance in a broken check. Empty without a trace."""
    steps = result.tables.steps
    traced = steps[steps["exec_start"].notna()] if "exec_start" in steps else steps.iloc[0:0]
    if variant is not None:
        traced = traced[traced["variant"] == variant]
    wrong = result.judgement.broken_steps
    beyond = wrong[wrong["difference"] > wrong["tolerance"]] if len(wrong) else wrong
    marks = set(zip(beyond["conversation"], beyond["step"], strict=True)) if len(beyond) else set()
    out = traced.assign(diverged=[(c, s) in marks for c, s in zip(traced["conversation"], traced["step"], strict=True)])
    return out.reindex(columns=TIMELINE_COLUMNS).sort_values(["exec_start", "lane"]).reset_index(drop=True)


STREAM_TIMELINE_COLUMNS = ["phase", "pass", "request", "event", "response", "time_s", "final", "diverged"]


def stream_timeline(result: CheckResult) -> pd.DataFrame:
    """A decoupled model's streams over time, as the client heard them (the server's executions are
    not traced): one row per event of every stream, alone (passes a and b) and staggered. `event`:
    "sent" (response NA), "response" (its index from 0, `final` where it carried the final flag,
    `diverged` where it differed from the request's lone stream beyond tolerance), "given_up"
    (silent for the idle limit, or too long) or "error". Empty for a model that is not decoupled."""
    measured = result.streams
    if measured is None:
        return pd.DataFrame(columns=STREAM_TIMELINE_COLUMNS)
    wrong = result.judgement.broken_steps
    beyond = wrong[wrong["difference"] > wrong["tolerance"]] if len(wrong) else wrong
    # The reference check compares pass b with pass a; the staggered check the staggered streams with pass a.
    compared_as = {stream_judge.REFERENCE: (streams.ALONE_PHASE, "b"), stream_judge.STAGGERED: (streams.STAGGERED_PHASE, "a")}
    marks = {(*compared_as[c], int(r), int(s)) for c, r, s in zip(beyond["check"], beyond["conversation"], beyond["step"], strict=True)
             if c in compared_as} if len(beyond) else set()
    rows: list[dict[str, object]] = []
    for s in [*measured.alone["a"], *measured.alone["b"], *measured.staggered]:
        key = {"phase": s.phase, "pass": s.pass_, "request": s.request}
        rows.append({**key, "event": "sent", "response": pd.NA, "time_s": s.sent_s, "final": False, "diverged": False})
        last = len(s.times) - 1
        for r, at in enumerate(s.times):
            rows.append({**key, "event": "response", "response": r, "time_s": at, "final": s.ended and r == last,
                         "diverged": (s.phase, s.pass_, s.request, r) in marks})
        heard = s.times[-1] if s.times else s.sent_s
        if s.given_up:  # the client stopped waiting idle_s after it last heard anything (too_long: at once)
            rows.append({**key, "event": "given_up", "response": pd.NA, "final": False, "diverged": False,
                         "time_s": heard + (measured.idle_s if s.given_up == "idle" else 0.0)})
        elif s.error:
            rows.append({**key, "event": "error", "response": pd.NA, "time_s": heard, "final": False, "diverged": False})
    return pd.DataFrame(rows, columns=STREAM_TIMELINE_COLUMNS).sort_values(["time_s", "request"], kind="stable").reset_index(drop=True)


def errors(result: CheckResult) -> pd.DataFrame:
    """Each broken session's difference from its reference over its steps, per output (the
    judgement's broken_steps): check, variant, conversation, session, step, role, output,
    difference, tolerance, t_send. A step is beyond tolerance where difference > tolerance."""
    return result.judgement.broken_steps.copy()
