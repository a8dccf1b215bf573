"""Decide each check from the measured tables: held, broken or skipped. Pure: no server, no words.

Which checks there are, which replies each judges and how, is declared in
app/checker/engine/checks.py; this module applies it, to the sequence and stateless paths' tables
(measure.py), and gives the verdicts both paths give (app/checker/engine/verdicts.py). A check
judged against the reference holds when every step it compared is within tolerance of the reference (compare.py); it breaks at the
first step that is not, and the verdict names that step: its session, step, correlation ID, the
output and the size of the difference, and where the trace and the log could tell, the
execution it ran in and which other sessions' requests shared it. A request the server refused
is a refusal, with Triton's own message and what caused it, never a wrong output. Nor is it ever a
held session: the only refusals the check provokes on purpose are its own given-up request (the
cancelled check's) and the slow client's late step, neither a refusal here, so a check that compared nothing wrong but met a
refusal breaks on the refusal, with what the cause says about the deployment (refusals.py):
a request that reached a server with no record of its sequence (a balancer split it), the idle
reaper ending a sequence whose client was still sending, or the server refusing or not answering.
The same holds for a check whose every request was refused.

The reference (every session or request alone, twice) must be reproducible first: when its two
runs differ, nothing else can be judged against it, and the later checks are skipped. On the
stateless path a lone request that answers differently the second time is the very thing the
checks look for: the answer depends on what came before, so the model keeps state and belongs
under the sequence batcher (`keeps_state`). Where the two runs differ only at replies that hold
NaN (which equals nothing), the reference breaks as `non_finite`.

The golden check compares every reply with its stream and step's golden output (the data
file's validation_data), within the same tolerances; the finite check finds NaN and Inf in float
outputs, alone and appearing under traffic. Neither leans on the reference, so both are judged
even where the reference broke. A reference the measurement marks
skipped (the server answered its repeats from the response cache) is skipped too, not judged held.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from app.checker.engine import checks, compare, inputs, witness
from app.checker.engine.aliases import Values
from app.checker.engine.checks import ALONE, FINITE, GOLDEN, REFERENCE, Check, Scope
from app.checker.engine.sequences import slow_client
from app.checker.engine.sequences.refusals import REFUSAL_DIAGNOSES, refusal_cause, refusals_of
from app.checker.engine.verdicts import STREAMS_WRAP, CheckJudgement, CheckVerdict, with_replies_witness, witnessed
from app.lab.observation import START_REFUSAL

if TYPE_CHECKING:
    from app.checker.engine.sequences.measure import Tables

DIAGNOSES = checks.diagnoses()  # broken check -> what it says about the model (words in app/checker/words/labels.py)
SHARED_SHOWN = 12  # other requests of a diverging step's execution listed in the report
REFUSED = frozenset(checks.REFUSAL_REASONS)


@dataclass(frozen=True)
class _Basis:
    """What a check compares replies with: the columns measure.py keeps for it."""

    prefix: str  # the difference columns: <prefix><OUTPUT>
    shown: str  # the column of first elements {output: {expected, got}} where they differ


_AGAINST_REFERENCE = _Basis("diff.", "values")
_AGAINST_GOLDEN = _Basis("gold.", "golden")


def judge(tables: Tables) -> CheckJudgement:
    steps = tables.steps
    diff_columns = [c for c in steps.columns if c.startswith("diff.")]
    types = dict(zip(tables.outputs["name"], tables.outputs["datatype"], strict=True))
    compared = [c.removeprefix("diff.") for c in diff_columns]
    sequence = tables.facts.sequence
    lone = checks.reference(sequence)
    reference_rows = _scope_rows(steps, lone, lone.scopes[0])
    tolerances = [compare.tolerance(name, types[name], _noise(reference_rows, name), tables.options.tolerance) for name in compared]
    limits = {t.output: t.value for t in tolerances}
    broken_mask = _beyond(steps, limits, _AGAINST_REFERENCE)
    refusals = refusals_of(steps, tables.facts.idle_timeout_us / 1e6)
    reference = _verdict(lone.code, ALONE, steps, reference_rows.index, broken_mask, limits, refusals, broken_reason=lone.diagnosis)
    if reference.verdict == "broken" and _only_float_noise(reference_rows, broken_mask, tolerances):
        reference = CheckVerdict(reference.check, reference.variant, "broken", "noise_above_tolerance", reference.values)
    elif reference.verdict == "broken" and _only_non_finite(steps, reference_rows, broken_mask):
        reference = CheckVerdict(reference.check, reference.variant, "broken", "non_finite", reference.values)
    blind = [s for s in tables.skipped.itertuples() if (s.check, s.variant) == (lone.code, ALONE)]
    if blind:  # run, but the server answered the repeats from its response cache: nothing to judge
        reference = CheckVerdict(lone.code, ALONE, "skipped", blind[0].reason, dict(blind[0].values or {}))
    verdicts: list[CheckVerdict] = [reference]
    skipped = {(r.check, r.variant): r for r in tables.skipped.itertuples()}
    golden_mask = _beyond(steps, limits, _AGAINST_GOLDEN) if tables.golden else None
    for check in checks.for_path(sequence):
        if check.always or not tables.options.wants(check.code):
            continue
        for scope in check.scopes:
            if check.judged_by == GOLDEN and not tables.golden:
                verdicts.append(CheckVerdict(check.code, scope.variant, "skipped", "no_golden_data", {}))
                continue
            if check.judged_by == FINITE and not any(compare.is_float(types[n]) for n in compared):
                verdicts.append(CheckVerdict(check.code, scope.variant, "skipped", "no_float_outputs", {}))
                continue
            if (check.code, scope.variant) in skipped:
                s = skipped[(check.code, scope.variant)]
                verdicts.append(CheckVerdict(check.code, scope.variant, "skipped", s.reason, dict(s.values or {})))
                continue
            if check.judged_by == REFERENCE and reference.verdict == "broken" and reference.reason not in REFUSED:
                why = "reference_non_finite" if reference.reason == "non_finite" else "not_reproducible"
                verdicts.append(CheckVerdict(check.code, scope.variant, "skipped", why, {}))
                continue
            rows = _scope_rows(steps, check, scope)
            if rows.empty:
                continue  # its phases did not run (another check's --only)
            if check.judged_by == REFERENCE:
                verdict = _verdict(check.code, scope.variant, steps, rows.index, broken_mask, limits, refusals, check.diagnosis)
                evidence = tables.witnesses.get((check.code, scope.variant)) if tables.witnesses is not None else None
                if check.code == slow_client.CHECK and evidence is not None:
                    verdict, evidence = _slow_client(verdict, rows, broken_mask, cast(slow_client.SlowClientWitness, evidence))
                verdicts.append(witnessed(_with_extras(verdict, check, steps, tables), evidence))
            elif check.judged_by == GOLDEN:
                assert golden_mask is not None  # the data has golden outputs: checked above
                verdict = _verdict(check.code, scope.variant, steps, rows.index, golden_mask, limits, refusals, check.diagnosis,
                                   _AGAINST_GOLDEN, nothing="no_golden_steps")
                verdicts.append(_golden_extras(verdict, rows, tables, limits))
            else:
                verdicts.append(_finite_verdict(check, scope, steps, rows, refusals))
    if tables.witnesses is not None:  # every other verdict's witness: the replies it compared
        verdicts = [with_replies_witness(v) for v in verdicts]
    broken_steps = _broken_steps(steps, broken_mask, limits, verdicts, sequence)
    diagnoses: dict[str, list[str]] = {}
    mixed = {v.variant for v in verdicts if v.check == "interleaved" and v.verdict == "broken"}
    for v in verdicts:
        if v.verdict != "broken":
            continue
        refused = v.values.get("refusal_diagnosis")
        if refused and refused != v.reason:  # broken on its outputs, and refused besides: both are said
            diagnoses.setdefault(refused, []).append(v.id)
        if v.check in ("id_reuse", "abandoned", "cancelled") and v.variant in mixed:
            continue  # sessions already mix when interleaved: that explains these too
        diagnoses.setdefault(v.reason, []).append(v.id)
    return CheckJudgement(verdicts, tolerances, refusals, broken_steps, [{"code": c, "checks": ids} for c, ids in diagnoses.items()],
                     _notes(tables))


def _notes(tables: Tables) -> list[dict[str, Any]]:
    """streams_wrap: on the sequence path, the data file's sequences shorter than the sessions that play them.
    Their later steps replay earlier inputs (as perf_analyzer does) onto a state that has moved
    on, so those steps have no golden output to compare with."""
    if not tables.facts.sequence or not tables.data_lengths:
        return []
    wrapped = _wrapped_sequences(tables)
    if not wrapped:
        return []
    return [{"code": STREAMS_WRAP, "values": {"streams": wrapped, "stream_lengths": [tables.data_lengths[s] for s in wrapped],
                                                "steps": max(tables.lengths), "golden": bool(tables.golden)}}]


def _wrapped_sequences(tables: Tables) -> list[int]:
    return inputs.wrapped_sequences(tables.data_lengths, tables.lengths)


def _only_float_noise(rows: pd.DataFrame, broken_mask: pd.DataFrame, tolerances: list[compare.Tolerance]) -> bool:
    """The lone runs differ only in float outputs, and by no more than the datatype's rounding
    may explain (the user's tolerance is below it): noise, not state."""
    broken = [t for t in tolerances if broken_mask.loc[rows.index, t.output].any()]
    return bool(broken) and all(compare.is_float(t.datatype) and t.noise <= compare.CEILING[t.datatype] for t in broken)


def _only_non_finite(steps: pd.DataFrame, rows: pd.DataFrame, broken_mask: pd.DataFrame) -> bool:
    """Every output where the second lone run differs from the first holds NaN or Inf in one of
    them: NaN equals nothing, so the model may well be deterministic; what it answers is no number."""
    broken = rows[broken_mask.loc[rows.index].any(axis=1)]
    if broken.empty:
        return False
    first = steps[(steps["phase"] == "reference") & (steps["pass"] == "a")]
    before = {(r.session, r.step): r.nonfinite for r in first.itertuples()}
    for index, row in broken.iterrows():
        found = {**(before.get((row["session"], row["step"])) or {}), **(row.get("nonfinite") or {})}
        if any(name not in found for name in broken_mask.columns[broken_mask.loc[index]]):
            return False
    return True


def _scope_rows(steps: pd.DataFrame, check: Check, scope: Scope) -> pd.DataFrame:
    """The rows one verdict judges: its phases and row variants, the check's passes and roles."""
    mask = steps["phase"].isin(scope.phases) & steps["variant"].isin(scope.row_variants)
    if check.passes is not None:
        mask &= steps["pass"].isin(check.passes)
    rows = steps[mask]
    if check.roles is not None:
        rows = rows[rows["role"].isin(check.roles)]
    if check.not_following and "follows" in rows:
        # A follower belongs to the victim whose slot it took, where the log says which.
        rows = rows[~((rows["role"] == "follower") & (rows["follows"] == check.not_following))]
    return rows


def _noise(rows: pd.DataFrame, output: str) -> float:
    values = pd.to_numeric(rows.get(f"diff.{output}"), errors="coerce").dropna() if len(rows) else pd.Series(dtype=float)
    return float(values.max()) if len(values) else 0.0


def _beyond(steps: pd.DataFrame, limits: dict[str, float], basis: _Basis) -> pd.DataFrame:
    """Per output, whether the row's difference exceeds its tolerance (False where not compared)."""
    out = pd.DataFrame(index=steps.index)
    for name, limit in limits.items():
        column = f"{basis.prefix}{name}"
        diff = pd.to_numeric(steps[column], errors="coerce") if column in steps else pd.Series(np.nan, index=steps.index)
        out[name] = (diff > limit).fillna(False)
    return out


def _sessions(rows: pd.DataFrame, of: pd.DataFrame) -> int:
    """Sequences (each "conversation" number is one), or on the stateless path the sessions whose requests these were."""
    return int(of["conversation" if rows["corrid"].ne("").any() else "session"].nunique()) if len(of) else 0


def _counts(rows: pd.DataFrame, compared: pd.DataFrame, refusals: pd.DataFrame) -> Values:
    """What every verdict says it looked at: the replies compared, their sessions, and the
    requests of its rows the server refused, by cause; with refusals, the first of them and the
    diagnosis its cause gives (refusal_diagnosis)."""
    mine = refusals[refusals["row"].isin(rows.index)] if not refusals.empty else refusals
    values: Values = {"compared": len(compared), "sessions": _sessions(rows, compared), "refusals": len(mine)}
    if len(mine):
        values["refusal_causes"] = {k: int(n) for k, n in mine["cause"].value_counts().items()}
        first = mine.assign(t=[rows.at[r, "t_send"] for r in mine["row"]]).sort_values(["t", "step"]).iloc[0]
        values["first_refusal"] = {"session": int(first["session"]), "step": int(first["step"]), "corrid": first["corrid"],
                                   "role": first["role"], "phase": first["phase"], "cause": first["cause"], "error": first["error"]}
        values["refusal_diagnosis"] = REFUSAL_DIAGNOSES[first["cause"]]
    return values


def _refused(check: str, variant: str, values: Values) -> CheckVerdict | None:
    """A check with nothing wrong in what it compared (or nothing compared) that met refusals is
    broken on them: a refused session is not a held one. None when nothing was refused."""
    if not values["refusals"]:
        return None
    return CheckVerdict(check, variant, "broken", values["refusal_diagnosis"], values)


def _verdict(check: str, variant: str, steps: pd.DataFrame, index: pd.Index, broken_mask: pd.DataFrame, limits: dict[str, float],
             refusals: pd.DataFrame, broken_reason: str, basis: _Basis = _AGAINST_REFERENCE, nothing: str = "nothing_compared") -> CheckVerdict:
    rows = steps.loc[index]
    judged = rows[(rows["judged"].astype(bool)) & (rows["error"] == "")]
    columns = [f"{basis.prefix}{n}" for n in limits if f"{basis.prefix}{n}" in judged]
    diffs = judged[columns].apply(pd.to_numeric, errors="coerce") if columns else pd.DataFrame(index=judged.index)
    compared = judged[diffs.notna().any(axis=1)] if columns else judged.iloc[0:0]
    values = _counts(rows, compared, refusals)
    if not len(compared):
        return _refused(check, variant, values) or CheckVerdict(check, variant, "skipped", nothing, values)
    bad = broken_mask.loc[compared.index].any(axis=1)
    if not bad.any():
        largest = diffs.loc[compared.index].max()
        name = largest.idxmax() if largest.notna().any() else None
        values["largest_difference"] = float(largest.max()) if name else 0.0
        values["largest_output"] = name.removeprefix(basis.prefix) if name else None
        return _refused(check, variant, values) or CheckVerdict(check, variant, "held", "", values)
    wrong = compared[bad]
    first = wrong.sort_values(["t_send", "step"]).iloc[0]
    output = next(n for n in limits if broken_mask.at[first.name, n])
    values.update(wrong_steps=len(wrong), wrong_sessions=_sessions(rows, wrong),
                  first=_first_divergence(steps, first, output, limits[output], basis))
    return CheckVerdict(check, variant, "broken", broken_reason, values)


def _first_divergence(steps: pd.DataFrame, row: pd.Series, output: str, limit: float | None, basis: _Basis = _AGAINST_REFERENCE) -> Values:
    diff = row.get(f"{basis.prefix}{output}")
    first = {
        "session": int(row["session"]), "step": int(row["step"]), "corrid": row["corrid"], "role": row["role"],
        "phase": row["phase"], "output": output, "difference": None if diff is None else float(diff), "tolerance": limit,
        "t_send": float(row["t_send"]), "shown": (row.get(basis.shown) or {}).get(output),
        "instance": _value(row.get("instance")), "slot": _value(row.get("slot")),
    }
    execution = _value(row.get("execution"))
    if execution is not None:
        together = steps[(steps["execution"] == execution) & (steps.index != row.name)]
        first["execution"] = {
            "id": int(execution), "lane": _value(row.get("lane")), "start_s": _value(row.get("exec_start")),
            "end_s": _value(row.get("exec_end")), "batch": len(together) + 1,
            "shared_with": [{"session": int(r.session), "step": int(r.step), "role": r.role, "corrid": r.corrid}
                            for r in together.head(SHARED_SHOWN).itertuples()],
        }
    return first


def _golden_extras(verdict: CheckVerdict, rows: pd.DataFrame, tables: Tables, limits: dict[str, float]) -> CheckVerdict:
    """What the golden verdict's words need: the tolerance of each output it compared, the first
    mismatch's stream, and on the sequence path the streams shorter than their sessions, whose
    wrapped steps it left uncompared."""
    extra: Values = {"tolerances": {n: limits[n] for n in limits if f"gold.{n}" in rows}}
    n = len(tables.data_lengths)
    if verdict.verdict == "broken" and n and "first" in verdict.values:
        verdict.values["first"]["stream"] = verdict.values["first"]["session"] % n
    if tables.facts.sequence and n:
        wrapped = _wrapped_sequences(tables)
        if wrapped:
            answered = rows[rows["judged"].astype(bool) & (rows["error"] == "")]
            beyond = [int(k) >= tables.data_lengths[int(s) % n] for s, k in zip(answered["session"], answered["step"], strict=True)]
            extra.update(wrapped_streams=wrapped, uncompared_steps=int(sum(beyond)))
    return CheckVerdict(verdict.check, verdict.variant, verdict.verdict, verdict.reason, {**verdict.values, **extra})


def _finite_verdict(check: Check, scope: Scope, steps: pd.DataFrame, rows: pd.DataFrame, refusals: pd.DataFrame) -> CheckVerdict:
    """Broken at the first reply whose float output holds NaN or Inf: in the lone runs, or under
    traffic at a step whose lone runs answered numbers (a step already non-finite alone is the
    lone runs' finding, counted here as non_finite_alone)."""
    judged = rows[rows["judged"].astype(bool) & (rows["error"] == "")]
    values = _counts(rows, judged, refusals)
    if not len(judged):
        return _refused(check.code, scope.variant, values) or CheckVerdict(check.code, scope.variant, "skipped", "nothing_compared", values)
    bad = judged["nonfinite"].notna() if "nonfinite" in judged else pd.Series(False, index=judged.index)
    if scope.variant != ALONE:
        lone = _lone_non_finite(steps)
        already = bad & pd.Series([(s, k) in lone for s, k in zip(judged["session"], judged["step"], strict=True)], index=judged.index)
        values["non_finite_alone"] = int(already.sum())
        bad &= ~already
    if not bad.any():
        return _refused(check.code, scope.variant, values) or CheckVerdict(check.code, scope.variant, "held", "", values)
    wrong = judged[bad]
    first = wrong.sort_values(["t_send", "step"]).iloc[0]
    output = next(iter(first["nonfinite"]))
    divergence = {**_first_divergence(steps, first, output, None), "difference": None, "shown": {"got": first["nonfinite"][output]}}
    values.update(wrong_steps=len(wrong), wrong_sessions=_sessions(rows, wrong), first=divergence)
    return CheckVerdict(check.code, scope.variant, "broken", check.diagnosis, values)


def _lone_non_finite(steps: pd.DataFrame) -> set[tuple[int, int]]:
    """(session, step) of every lone reply (both runs) that held NaN or Inf."""
    lone = steps[steps["phase"] == "reference"]
    if "nonfinite" not in lone:
        return set()
    lone = lone[lone["nonfinite"].notna()]
    return {(int(s), int(k)) for s, k in zip(lone["session"], lone["step"], strict=True)}


def _with_extras(verdict: CheckVerdict, check: Check, steps: pd.DataFrame, tables: Tables) -> CheckVerdict:
    """Facts a check's words need beyond held/broken: did it reach the backlog, land reused IDs
    on old slots, put a follower on the victim's slot, get the cancellation through."""
    extra: Values = {}
    scope = check.scope(verdict.variant)
    rows = steps[steps["phase"].isin(scope.phases) & steps["variant"].isin(scope.row_variants)]  # every role
    phase_rows = tables.phases[(tables.phases["phase"].isin(scope.phases)) & (tables.phases["variant"] == verdict.variant)]
    if verdict.check == "interleaved" and len(phase_rows):
        p = phase_rows.iloc[0]
        extra.update(capacity=int(p["capacity"]), in_flight=int(p["workers"]), overflow=bool(p["overflow"]))
    if verdict.check == "id_reuse":
        extra.update(_reuse_places(rows))
    if verdict.check in ("abandoned", "cancelled"):
        victim = "victim_abandon" if verdict.check == "abandoned" else "victim_cancel"
        extra.update(_victim_places(rows, victim))
        if verdict.check == "cancelled":
            target = rows[(rows["role"] == victim) & (rows["outcome"] == "cancel_target")]
            if len(target):
                error = str(target.iloc[0]["error"])
                extra["cancel_outcome"] = ("served" if not error else "refused" if START_REFUSAL in error
                                           else "gave_up" if refusal_cause(error, 0, 0, 0) == "timed_out" else "failed")
                extra["cancel_error"] = error
                # Whether the given-up request reached the server: its trace record says so; untraced, unknown.
                traced = tables.traced and "request_start_ns" in target
                extra["cancel_reached"] = bool(pd.notna(target.iloc[0]["request_start_ns"])) if traced else None
        extra["idle_timeout_s"] = tables.facts.idle_timeout_us / 1e6
    if verdict.check == "cancelled" and verdict.verdict == "held" and extra.get("cancel_reached") is False:
        # The client gave up before its request left: what followed is the abandoned check again.
        return CheckVerdict(verdict.check, verdict.variant, "skipped", "cancel_not_delivered", {**verdict.values, **extra})
    if not extra:
        return verdict
    out = CheckVerdict(verdict.check, verdict.variant, verdict.verdict, verdict.reason, {**verdict.values, **extra})
    if tables.witnesses is None:  # tables no measurement wrote: no witness to judge by
        return out
    if verdict.check == "interleaved":
        capacity = int(extra.get("capacity") or 0)
        interleaved = rows[rows["role"] == "interleaved"] if "role" in rows else rows
        return witnessed(out, witness.backlog(interleaved, capacity, tables.pending_peaks.get(verdict.variant)))
    if verdict.check == "id_reuse":
        return witnessed(out, witness.reuse(extra))
    return witnessed(out, witness.freed_slot(extra))  # abandoned, cancelled


def _slow_client(verdict: CheckVerdict, rows: pd.DataFrame, broken_mask: pd.DataFrame,
                 evidence: slow_client.SlowClientWitness) -> tuple[CheckVerdict, slow_client.SlowClientWitness]:
    """The slow client's witness with whether its restarted session matched its reference (every step
    answered within tolerance; None: it never restarted), and the verdict broken where the fault,
    exercised, left state or pending requests behind (slow_client.leak)."""
    restart = rows[rows["role"] == slow_client.RESTART]
    matched = None if restart.empty else bool((restart["error"] == "").all() and not broken_mask.loc[restart.index].to_numpy().any())
    evidence = evidence.copy()
    evidence["restarted_matched"] = matched
    left = slow_client.leak(evidence)
    if verdict.verdict == "held" and evidence["exercised"] and left:
        return CheckVerdict(verdict.check, verdict.variant, "broken", left, verdict.values), evidence
    return verdict, evidence


def _reuse_places(rows: pd.DataFrame) -> Values:
    """How many reused IDs' sequences the log placed on an instance (and slot) that an earlier
    sequence of the same ID had used; None when the log was not read. Any earlier one counts, not
    only the last: a model that keeps state per ID and instance hands it to whichever sequence of
    that ID next lands there, and the chain of lone sessions (one more than there are instances)
    makes at least one such landing certain."""
    placed = rows.dropna(subset=["instance"]) if "instance" in rows else rows.iloc[0:0]
    if placed.empty:
        return {"reused": int(rows[rows["role"] != "first_use"]["conversation"].nunique()), "same_instance": None, "same_slot": None}
    sequences = placed.groupby("conversation").agg(corrid=("corrid", "first"), t=("t_send", "min"), role=("role", "first"),
                                                   instance=("instance", "first"), slot=("slot", "first")).sort_values("t")
    same_instance = same_slot = reused = 0
    for _, group in sequences.groupby("corrid"):
        instances: set[object] = set()  # the log's instance names and slots, as pandas read them
        places: set[tuple[object, object]] = set()
        for seq in group.itertuples():
            if instances:
                reused += 1
                same_instance += seq.instance in instances
                same_slot += (seq.instance, seq.slot) in places
            instances.add(seq.instance)
            places.add((seq.instance, seq.slot))
    return {"reused": reused, "same_instance": int(same_instance), "same_slot": int(same_slot)}


def _victim_places(rows: pd.DataFrame, victim: str) -> Values:
    """Whether a follower took the victim's slot (None: the log did not say)."""
    if "instance" not in rows:
        return {"next_on_slot": None}
    v = rows[(rows["role"] == victim)].dropna(subset=["instance"])
    f = rows[(rows["role"] == "follower")].dropna(subset=["instance"])
    if v.empty or f.empty:
        return {"next_on_slot": None}
    place = (v.iloc[0]["instance"], v.iloc[0]["slot"])
    on_slot = f[(f["instance"] == place[0]) & (f["slot"] == place[1])]
    return {"next_on_slot": bool(len(on_slot)), "victim_instance": place[0], "victim_slot": _value(place[1]),
            "victim_ended_by": _value(v.iloc[0].get("ended_by"))}


def _broken_steps(steps: pd.DataFrame, broken_mask: pd.DataFrame, limits: dict[str, float], verdicts: list[CheckVerdict], sequence: bool) -> pd.DataFrame:
    """Every step beyond tolerance in a broken check judged against the reference, long format
    (one row per output), for the page's error-over-steps figure."""
    columns = ["check", "variant", "conversation", "session", "step", "role", "output", "difference", "tolerance", "t_send"]
    records = []
    for v in verdicts:
        check = checks.get(v.check, sequence)
        if v.verdict != "broken" or check.judged_by != REFERENCE:
            continue
        index = _scope_rows(steps, check, check.scope(v.variant)).index
        rows = steps.loc[index]
        wrong_sequences = set(rows[broken_mask.loc[index].any(axis=1)]["conversation"])
        for row in rows[rows["conversation"].isin(wrong_sequences)].itertuples():
            for name, limit in limits.items():
                diff = steps.at[row.Index, f"diff.{name}"]
                if diff is None or (isinstance(diff, float) and math.isnan(diff)):
                    continue
                records.append({"check": v.check, "variant": v.variant, "conversation": row.conversation, "session": row.session,
                                "step": row.step, "role": row.role, "output": name, "difference": float(diff), "tolerance": limit,
                                "t_send": row.t_send})
    return pd.DataFrame(records, columns=columns)


def _value(value: object) -> Any:  # a pandas cell, as plain Python: Any, as pandas' own cells are
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return value.item() if hasattr(value, "item") else value
