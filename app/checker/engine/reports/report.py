"""A check's report as JSON (codes and values, versioned like the run report) and the tables the
page's figures draw. Words for every code are in app/checker/words/ (labels.py).

The report's layout and the meaning of every key are in its JSON Schema,
schemas/check-report-2.schema.json (kind "check", schema 2; schema 1's file still ships for older
reports). Its top-level description gives the two conventions: sessions, streams and steps count
from 0, and times are seconds from the check's start.
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
