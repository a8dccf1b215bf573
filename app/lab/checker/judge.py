"""Decide each check from the measured tables: held, broken or skipped. Pure: no server, no words.

A check holds when every step it compared is within tolerance of the reference (compare.py);
it breaks at the first step that is not, and the verdict names that step: its session, step,
correlation ID, the output and the size of the difference, and where the trace and the log
could tell, the execution it ran in and which other sessions' requests shared it. A request
the server refused is a refusal, with Triton's own message and what caused it, never a wrong
output; a check whose every request was refused is skipped, not held.

The reference (every session or request alone, twice) must be reproducible first: when its two
runs differ, nothing else can be judged against it, and the later checks are skipped. On the
stateless path a lone request that answers differently the second time is the very thing the
checks look for: the answer depends on what came before, so the model keeps state and belongs
under the sequence batcher (`keeps_state`). A reference the measurement marks skipped (the server
answered its repeats from the response cache) is skipped too, not judged held.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from app.lab.checker import compare
from app.lab.checker.options import SEQUENCE_CHECKS, STATELESS_CHECKS, VARIANTS
from app.lab.observation.server_log import START_REFUSAL

SEQUENCE_RULES = {
    # check -> (phase, roles); None: every role of the phase
    "interleaved": ("interleaved", None),
    "id_reuse": ("id_reuse", ("reuse", "chain")),  # the first wave only frees the slots and IDs
    "abandoned": ("abandon_round", ("holder", "victim_abandon", "follower")),
    "cancelled": ("abandon_round", ("holder", "victim_cancel", "follower")),
}
STATELESS_RULES = {"batch_composition": "concurrent", "after_traffic": "after_traffic"}
DIAGNOSES = {
    # broken check -> what it says about the model (words in app/text/checker.py)
    "reference": "not_reproducible",
    "repeat_alone": "keeps_state",
    "after_traffic": "keeps_state",
    "batch_composition": "batch_dependent",
    "interleaved": "sessions_mix",
    "id_reuse": "inherits_after_end",
    "abandoned": "aborted_pollutes",
    "cancelled": "aborted_pollutes",
}
SHARED_SHOWN = 12  # other requests of a diverging step's execution listed in the report


@dataclass(frozen=True)
class Verdict:
    check: str
    variant: str  # "alone" (the reference runs), "all_instances" or "one_instance"
    verdict: str  # "held", "broken" or "skipped"
    reason: str = ""  # skipped: why; broken: what the divergence means (a DIAGNOSES code)
    values: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.check}/{self.variant}"

    def to_json(self) -> dict:
        return {"check": self.check, "variant": self.variant, "verdict": self.verdict, "reason": self.reason,
                "values": _plain(self.values)}


@dataclass
class Judgement:
    verdicts: list[Verdict]
    tolerances: list[compare.Tolerance]
    refusals: pd.DataFrame  # one row per refused request: where, Triton's message, cause
    broken_steps: pd.DataFrame  # steps that differ beyond tolerance: check, variant, conversation, session, step, output, difference
    diagnoses: list[dict]  # {code, checks}: what the broken checks say about the model

    @property
    def exit_code(self) -> int:
        """0 when every check that ran held, 1 when one broke; 2 (could not check) is raised before."""
        return 1 if any(v.verdict == "broken" for v in self.verdicts) else 0

    def verdict(self, check: str, variant: str | None = None) -> Verdict:
        for v in self.verdicts:
            if v.check == check and (variant is None or v.variant == variant):
                return v
        raise KeyError(f"no verdict for {check}/{variant}")


def judge(tables) -> Judgement:
    steps = tables.steps
    diff_columns = [c for c in steps.columns if c.startswith("diff.")]
    types = dict(zip(tables.outputs["name"], tables.outputs["datatype"], strict=True))
    compared = [c.removeprefix("diff.") for c in diff_columns]
    reference_rows = _rows(steps, phase="reference", pass_="b")
    tolerances = [compare.tolerance(name, types[name], _noise(reference_rows, name), tables.options.tolerance) for name in compared]
    limits = {t.output: t.value for t in tolerances}
    broken_mask = _beyond(steps, limits)
    refusals = _refusals(steps, tables.facts.idle_timeout_us / 1e6)
    verdicts: list[Verdict] = []
    sequence = tables.facts.sequence
    first_code = "reference" if sequence else "repeat_alone"
    reference = _verdict(first_code, "alone", steps, reference_rows.index, broken_mask, limits, refusals, broken_reason=DIAGNOSES[first_code])
    if reference.verdict == "broken" and _only_float_noise(reference_rows, broken_mask, tolerances):
        reference = Verdict(reference.check, reference.variant, "broken", "noise_above_tolerance", reference.values)
    blind = [s for s in tables.skipped.itertuples() if (s.check, s.variant) == (first_code, "alone")]
    if blind:  # run, but the server answered the repeats from its response cache: nothing to judge
        reference = Verdict(first_code, "alone", "skipped", blind[0].reason, dict(blind[0].values or {}))
    verdicts.append(reference)
    skipped = {(r.check, r.variant): r for r in tables.skipped.itertuples()}
    checks = SEQUENCE_CHECKS[1:] if sequence else STATELESS_CHECKS[1:]
    variants = VARIANTS if sequence else ("all_instances",)
    for check in checks:
        if not tables.options.wants(check):
            continue
        for variant in variants:
            v = "alone" if check == "after_traffic" else variant
            if (check, variant) in skipped:
                s = skipped[(check, variant)]
                verdicts.append(Verdict(check, v, "skipped", s.reason, dict(s.values or {})))
                continue
            if reference.verdict == "broken":
                verdicts.append(Verdict(check, v, "skipped", "not_reproducible", {}))
                continue
            index = _check_rows(steps, check, v, sequence)
            if index is None:
                continue
            verdict = _verdict(check, v, steps, index, broken_mask, limits, refusals, broken_reason=DIAGNOSES[check])
            verdicts.append(_with_extras(verdict, steps, tables))
    broken_steps = _broken_steps(steps, broken_mask, limits, verdicts, sequence)
    diagnoses: dict[str, list[str]] = {}
    mixed = {v.variant for v in verdicts if v.check == "interleaved" and v.verdict == "broken"}
    for v in verdicts:
        if v.verdict != "broken":
            continue
        if v.check in ("id_reuse", "abandoned", "cancelled") and v.variant in mixed:
            continue  # sessions already mix when interleaved: that explains these too
        diagnoses.setdefault(v.reason, []).append(v.id)
    return Judgement(verdicts, tolerances, refusals, broken_steps, [{"code": c, "checks": ids} for c, ids in diagnoses.items()])


def _only_float_noise(rows: pd.DataFrame, broken_mask: pd.DataFrame, tolerances: list[compare.Tolerance]) -> bool:
    """The lone runs differ only in float outputs, and by no more than the datatype's rounding
    may explain (the user's tolerance is below it): noise, not state."""
    broken = [t for t in tolerances if broken_mask.loc[rows.index, t.output].any()]
    return bool(broken) and all(compare.is_float(t.datatype) and t.noise <= compare.CEILING[t.datatype] for t in broken)


def _rows(steps: pd.DataFrame, phase: str, pass_: str | None = None, variant: str | None = None) -> pd.DataFrame:
    mask = steps["phase"] == phase
    if pass_ is not None:
        mask &= steps["pass"] == pass_
    if variant is not None:
        mask &= steps["variant"] == variant
    return steps[mask]


def _check_rows(steps: pd.DataFrame, check: str, variant: str, sequence: bool) -> pd.Index | None:
    if sequence:
        phase, roles = SEQUENCE_RULES[check]
        rows = _rows(steps, phase, variant=variant)
        if rows.empty:
            return None
        if roles is not None:
            rows = rows[rows["role"].isin(roles)]
            # A follower belongs to the victim whose slot it took, where the log says which.
            other = "victim_cancel" if check == "abandoned" else "victim_abandon"
            if "follows" in rows:
                rows = rows[~((rows["role"] == "follower") & (rows["follows"] == other))]
        return rows.index
    phase = STATELESS_RULES[check]
    rows = _rows(steps, phase)
    return None if rows.empty else rows.index


def _noise(rows: pd.DataFrame, output: str) -> float:
    values = pd.to_numeric(rows.get(f"diff.{output}"), errors="coerce").dropna() if len(rows) else pd.Series(dtype=float)
    return float(values.max()) if len(values) else 0.0


def _beyond(steps: pd.DataFrame, limits: dict[str, float]) -> pd.DataFrame:
    """Per output, whether the row's difference exceeds its tolerance (False where not compared)."""
    out = pd.DataFrame(index=steps.index)
    for name, limit in limits.items():
        diff = pd.to_numeric(steps[f"diff.{name}"], errors="coerce")
        out[name] = (diff > limit).fillna(False)
    return out


def _verdict(check: str, variant: str, steps: pd.DataFrame, index, broken_mask: pd.DataFrame, limits: dict,
             refusals: pd.DataFrame, broken_reason: str) -> Verdict:
    rows = steps.loc[index]
    judged = rows[(rows["judged"].astype(bool)) & (rows["error"] == "")]
    diffs = judged[[f"diff.{n}" for n in limits]].apply(pd.to_numeric, errors="coerce") if limits else pd.DataFrame(index=judged.index)
    compared = judged[diffs.notna().any(axis=1)] if limits else judged.iloc[0:0]
    mine = refusals[refusals["row"].isin(rows.index)] if not refusals.empty else refusals
    values: dict = {
        "compared": len(compared),
        # Sequences (each conversation is one), or on the stateless path the sessions whose requests these were.
        "sessions": int(compared["conversation" if rows["corrid"].ne("").any() else "session"].nunique()) if len(compared) else 0,
        "refusals": len(mine),
    }
    if len(mine):
        values["refusal_causes"] = {k: int(n) for k, n in mine["cause"].value_counts().items()}
    if not len(compared):
        return Verdict(check, variant, "skipped", "all_refused" if len(mine) else "nothing_compared", values)
    bad = broken_mask.loc[compared.index].any(axis=1)
    if not bad.any():
        largest = diffs.loc[compared.index].max()
        name = largest.idxmax() if largest.notna().any() else None
        values["largest_difference"] = float(largest.max()) if name else 0.0
        values["largest_output"] = name.removeprefix("diff.") if name else None
        return Verdict(check, variant, "held", "", values)
    wrong = compared[bad]
    first = wrong.sort_values(["t_send", "step"]).iloc[0]
    output = next(n for n in limits if broken_mask.at[first.name, n])
    values.update(
        wrong_steps=len(wrong),
        wrong_sessions=int(wrong["conversation" if rows["corrid"].ne("").any() else "session"].nunique()),
        first=_first_divergence(steps, first, output, limits[output]),
    )
    return Verdict(check, variant, "broken", broken_reason, values)


def _first_divergence(steps: pd.DataFrame, row, output: str, limit: float) -> dict:
    first = {
        "session": int(row["session"]), "step": int(row["step"]), "corrid": row["corrid"], "role": row["role"],
        "phase": row["phase"], "output": output, "difference": float(row[f"diff.{output}"]), "tolerance": limit,
        "t_send": float(row["t_send"]), "shown": (row.get("values") or {}).get(output),
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


def _with_extras(verdict: Verdict, steps: pd.DataFrame, tables) -> Verdict:
    """Facts a check's words need beyond held/broken: did it reach the backlog, land reused IDs
    on old slots, put a follower on the victim's slot, get the cancellation through."""
    extra: dict = {}
    phase = SEQUENCE_RULES[verdict.check][0] if verdict.check in SEQUENCE_RULES else STATELESS_RULES[verdict.check]
    rows = _rows(steps, phase, variant=verdict.variant if verdict.check in SEQUENCE_RULES else None)
    phase_rows = tables.phases[(tables.phases["phase"] == phase) & (tables.phases["variant"] == verdict.variant)]
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
        return Verdict(verdict.check, verdict.variant, "skipped", "cancel_not_delivered", {**verdict.values, **extra})
    if not extra:
        return verdict
    return Verdict(verdict.check, verdict.variant, verdict.verdict, verdict.reason, {**verdict.values, **extra})


def _reuse_places(rows: pd.DataFrame) -> dict:
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
        instances, places = set(), set()
        for seq in group.itertuples():
            if instances:
                reused += 1
                same_instance += seq.instance in instances
                same_slot += (seq.instance, seq.slot) in places
            instances.add(seq.instance)
            places.add((seq.instance, seq.slot))
    return {"reused": reused, "same_instance": int(same_instance), "same_slot": int(same_slot)}


def _victim_places(rows: pd.DataFrame, victim: str) -> dict:
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


def _refusals(steps: pd.DataFrame, idle_s: float) -> pd.DataFrame:
    """Every refused request (the checker's own cancellation excepted), with what caused it."""
    columns = ["row", "phase", "variant", "role", "session", "step", "corrid", "error", "cause", "waited_s"]
    failed = steps[(steps["error"] != "") & (steps["outcome"] != "cancel_target") & (steps["outcome"] != "not_sent")]
    if failed.empty:
        return pd.DataFrame(columns=columns)
    records = []
    for index, row in failed.iterrows():
        conversation = steps[steps["conversation"] == row["conversation"]].sort_values("step")
        first = conversation.iloc[0]
        waited = float(first["t_recv"] - first["t_send"])
        earlier = conversation[conversation["step"] < row["step"]]
        # The server's idle clock runs from the previous request's arrival (about its send).
        gap = float(row["t_send"] - earlier.iloc[-1]["t_send"]) if len(earlier) else 0.0
        records.append({"row": index, "phase": row["phase"], "variant": row["variant"], "role": row["role"],
                        "session": int(row["session"]), "step": int(row["step"]), "corrid": row["corrid"],
                        "error": row["error"], "cause": refusal_cause(str(row["error"]), waited, gap, idle_s), "waited_s": waited})
    return pd.DataFrame(records, columns=columns)


def refusal_cause(error: str, first_wait_s: float, gap_s: float, idle_s: float) -> str:
    """Why the server refused a request, from its message and the sequence's timing:
    reaped_after_backlog  a START-flag refusal after the sequence's first request waited in the
                          backlog longer than the idle timeout (the reaper ended it on arrival);
    idle_gap              a START-flag refusal after the client paused longer than the idle timeout;
    sequence_ended        a START-flag refusal with neither (the server ended it otherwise);
    timed_out, no_answer  a deadline passed / the server never answered;
    server_error          anything else the server said."""
    lowered = error.lower()
    if START_REFUSAL in error:
        if idle_s and first_wait_s > idle_s:
            return "reaped_after_backlog"
        if idle_s and gap_s > idle_s:
            return "idle_gap"
        return "sequence_ended"
    if "deadline" in lowered or "timed out" in lowered or "timeout" in lowered:
        return "timed_out"
    if lowered.startswith("no answer"):
        return "no_answer"
    return "server_error"


def _broken_steps(steps: pd.DataFrame, broken_mask: pd.DataFrame, limits: dict, verdicts: list[Verdict], sequence: bool) -> pd.DataFrame:
    """Every step beyond tolerance in a broken check, long format (one row per output), for the
    page's error-over-steps figure."""
    columns = ["check", "variant", "conversation", "session", "step", "role", "output", "difference", "tolerance", "t_send"]
    records = []
    for v in verdicts:
        if v.verdict != "broken":
            continue
        if v.check in ("reference", "repeat_alone"):
            index = _rows(steps, "reference", pass_="b").index
        else:
            index = _check_rows(steps, v.check, v.variant if v.check != "after_traffic" else "alone", sequence)
        rows = steps.loc[index]
        wrong_conversations = set(rows[broken_mask.loc[index].any(axis=1)]["conversation"])
        for row in rows[rows["conversation"].isin(wrong_conversations)].itertuples():
            for name, limit in limits.items():
                diff = steps.at[row.Index, f"diff.{name}"]
                if diff is None or (isinstance(diff, float) and math.isnan(diff)):
                    continue
                records.append({"check": v.check, "variant": v.variant, "conversation": row.conversation, "session": row.session,
                                "step": row.step, "role": row.role, "output": name, "difference": float(diff), "tolerance": limit,
                                "t_send": row.t_send})
    return pd.DataFrame(records, columns=columns)


def _value(value):
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return value.item() if hasattr(value, "item") else value


def _plain(value):
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else "inf"
    if value is pd.NA:
        return None
    return value
