"""Why a broken sequence check's sessions went wrong, named from the step where each diverged. Pure.

A broken check says that a session's answers changed; the advice depends on how. For each
broken sequence of a broken interleaved, id_reuse, abandoned or cancelled check,
take the step k where it first went beyond tolerance and the replies it got from k on (kept
during measurement, app/checker/engine/sequences/observed.py), and hold them against hypotheses, each a lone
sequence that app/checker/engine/sequences/replay.py plays on the model with a fresh correlation ID:

  lost     the session's steps from k on, as a new sequence starting at k (START on step k):
           its state was gone, and it answered as a session that started over;
  stale    an earlier sequence of the same ID (the last one; those the log placed on its
           instance; all of them), its steps sent, then this session's steps: one sequence,
           START only where the requests had it, so a mid-sequence START (which Triton accepts,
           keeping the slot, with a warning) reaches the model as the reused ID's START did:
           nothing was reset on START;
  foreign  another sequence's steps up to its last one before step k (executed before, by
           the trace; else replied before; also as sent before, and with a request its client
           gave up on), then this session's from k: it read that session's state; or its own
           steps and the other's before k merged in time order ("mix"): their states were one;
  other    none of them matched.

Candidates for foreign are the sequences of the same phase and variant that the log placed
on the same instance and slot first, then on the same instance, then those not placed, then
those on another instance, nearest in time first. A hypothesis matches when its reply to step k
is within the output tolerances of the observed one; it scores the steps from k that match in a
row (at most MATCH_STEPS), the best score wins (ties: the order above), and one that matches
every compared step ends the search. The cost is bounded: MAX_SESSIONS broken sessions per check
(the earliest to diverge), MAX_SOURCES candidates and MAX_HYPOTHESES hypotheses per session,
MAX_REQUESTS replayed requests per check; the verdict's values say the caps.

The advice is the strongest evidence among the check's diagnosed sessions (advice()): foreign
-> foreign_state_oldest / foreign_state_direct (key the state by correlation ID under oldest;
by instance and slot, honouring READY, under direct), except a foreign source that had stopped
before the session's START, which is stale_state's case; then stale -> stale_state (reset on
START); then lost -> lost_state (a state store for instances x slots sequences); other only ->
the check's own diagnosis (judge.DIAGNOSES).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np
import pandas as pd

from app.checker.engine import checks, compare
from app.checker.engine.aliases import Array
from app.checker.engine.sequences import slow_client
from app.checker.engine.verdicts import CheckJudgement, CheckVerdict

if TYPE_CHECKING:
    from app.checker.engine.sequences.measure import Tables

# The sequence checks judged against the lone references (app/checker/engine/checks.py): their broken
# sessions are the ones replayed. Not the slow client's: its restarted session carried the reaped
# sequence's state, which its own diagnosis names with the fault; a replay would only say so again.
CHECKS = tuple(c.code for c in checks.for_path(sequence=True) if c.judged_by == checks.REFERENCE and not c.always
               and c.code != slow_client.CHECK)
CLASSES = ("lost", "stale", "foreign", "other")  # also the order a session's ties are broken in
ADVICE_CODES = ("foreign_state_oldest", "foreign_state_direct", "stale_state", "lost_state")  # the strongest first
MAX_SESSIONS = 6  # broken sessions diagnosed per check: the earliest to diverge
MAX_SOURCES = 3  # other sequences tried as the source of a foreign state, per session
MAX_HYPOTHESES = 8  # per session
MATCH_STEPS = 3  # replies compared from the divergence on; the first must match
MAX_REQUESTS = 400  # replayed per check
CAPS = {"sessions": MAX_SESSIONS, "sources": MAX_SOURCES, "hypotheses": MAX_HYPOTHESES, "steps": MATCH_STEPS, "requests": MAX_REQUESTS}

Observed = dict[str, Array | None]  # what a step got, by compared output (None: that output was missing)


# The sequence whose state a hypothesis carries (its first request's place); ended_before: it sent
# nothing after the broken session's first request. Its keys are the report's, hence the call form.
Source = TypedDict("Source", {  # noqa: UP013 (code-glossary.yaml forbids a field named conversation)
    "conversation": int, "session": int, "corrid": str, "role": str, "instance": str | None, "slot": int | None, "ended_before": bool})


# One diagnosed session (values["diagnosis"]["sessions"][]): "class" is a keyword, hence the call form.
_SessionKeys = TypedDict("_SessionKeys", {"conversation": int, "session": int, "corrid": str, "role": str, "step": int,
                                           "instance": str | None, "slot": int | None, "class": str, "matched": int,
                                           "compared": int, "tried": int})


class Session(_SessionKeys, total=False):
    form: str  # where the best hypothesis carries another sequence's state
    source: Source


class Summary(TypedDict):
    """A verdict's values["diagnosis"]."""

    sessions: list[Session]
    broken_sessions: int
    diagnosed: int
    replayed: int
    advice: str | None
    caps: dict[str, int]


@dataclass(frozen=True)
class Send:
    """One replayed request: the inputs of `session`'s step `step`; START as given (always on the
    first of a hypothesis), END only on its last; `compared` ones are held against the observed."""

    session: int
    step: int
    start: bool = False
    compared: bool = False


@dataclass(frozen=True)
class Hypothesis:
    kind: str  # lost | stale | foreign
    sends: tuple[Send, ...]
    form: str = ""  # stale: last | instance | all; foreign: replace | sent | given_up | mix
    source: Source | None = field(default=None, hash=False)  # the sequence whose state it carries

    @property
    def requests(self) -> int:
        return len(self.sends)


@dataclass(frozen=True)
class Broken:
    """One broken session of a check: where it diverged, what it got from there, what to try."""

    check: str
    variant: str
    sequence: int
    session: int
    corrid: str
    role: str
    step: int
    instance: str | None = None  # where the log placed its sequence
    slot: int | None = None
    observed: tuple[Observed, ...] = ()  # per step from `step` on
    hypotheses: tuple[Hypothesis, ...] = ()


@dataclass
class Plan:
    verdict: CheckVerdict
    sessions: list[Broken]
    broken_sessions: int  # all of the check's broken sequences, diagnosed or not


def plan(tables: Tables, judgement: CheckJudgement) -> list[Plan]:
    """The broken sequence checks' sessions to diagnose, with their hypotheses."""
    out: list[Plan] = []
    if not tables.facts.sequence:
        return out
    outputs = [t.output for t in judgement.tolerances]
    for v in judgement.verdicts:
        if v.verdict != "broken" or v.check not in CHECKS:
            continue
        wrong = judgement.broken_steps
        wrong = wrong[(wrong["check"] == v.check) & (wrong["variant"] == v.variant) & (wrong["difference"] > wrong["tolerance"])]
        if wrong.empty:
            continue
        firsts = wrong.sort_values("step").groupby("conversation", sort=False).first().sort_values("t_send")
        steps = tables.steps
        phases = checks.get(v.check, sequence=True).scope(v.variant).phases
        phase_rows = steps[steps["phase"].isin(phases) & (steps["variant"] == v.variant) & (steps["outcome"] != "not_sent")]
        sequences = {c: rows.sort_values("step") for c, rows in phase_rows.groupby("conversation")}
        sessions: list[Broken] = []
        for sequence, first in firsts.iterrows():
            if len(sessions) == MAX_SESSIONS:
                break
            b = broken_sequence(tables, v, sequences, int(sequence), int(first["step"]), outputs)
            if b is not None:
                sessions.append(b)
        out.append(Plan(v, sessions, len(firsts)))
    return out


def broken_sequence(tables: Tables, v: CheckVerdict, sequences: dict[int, pd.DataFrame], sequence: int, k: int,
                   outputs: list[str]) -> Broken | None:
    """The session's observed replies from step k and its hypotheses; None where nothing was kept."""
    mine = sequences[sequence]
    observed = []
    for row in mine[mine["step"] >= k].itertuples():
        arrays = _observed(tables, row, outputs)
        if arrays is None:
            break
        observed.append(arrays)
        if len(observed) == MATCH_STEPS:
            break
    if not observed:
        return None
    first = mine.iloc[0]
    b = Broken(v.check, v.variant, sequence, int(first["session"]), str(first["corrid"]), str(first["role"]), k,
               *_place(first), observed=tuple(observed))
    return dataclasses.replace(b, hypotheses=tuple(hypotheses(b, sequences, tables.lengths)[:MAX_HYPOTHESES]))


def _observed(tables: Tables, row: Any, outputs: list[str]) -> Observed | None:  # row: a pandas itertuples row
    """What the request got: its kept reply, else (within tolerance) its reference; None when unknown."""
    if row.error or not row.judged or row.request_id in tables.unobserved:
        return None
    arrays = tables.observed.get(row.request_id)
    if arrays is None:
        arrays = tables.references.get((int(row.session), int(row.step)))
    if arrays is None:
        return None
    return {name: arrays.get(name) for name in outputs}


def hypotheses(b: Broken, sequences: dict[int, pd.DataFrame], lengths: list[int]) -> list[Hypothesis]:
    """lost, then stale, then foreign, each as the sends of one lone sequence."""
    mine = sequences[b.sequence]
    suffix = _suffix(b, mine, lengths)
    lost = [Hypothesis("lost", (dataclasses.replace(suffix[0], start=True), *suffix[1:]))] if b.step > 0 else []
    return lost + _stale(b, sequences, suffix) + _foreign(b, sequences, suffix)


def _stale(b: Broken, sequences: dict[int, pd.DataFrame], suffix: tuple[Send, ...]) -> list[Hypothesis]:
    """Earlier sequences of the same ID continued: the last one, those on its instance, all of them."""
    mine = sequences[b.sequence]
    began = float(mine["t_send"].min())
    earlier = sorted((c for c, rows in sequences.items() if c != b.sequence and str(rows.iloc[0]["corrid"]) == b.corrid
                      and float(rows["t_send"].min()) < began), key=lambda c: float(sequences[c]["t_send"].min()))
    if not earlier:
        return []
    chains: list[tuple[str, list[int]]] = [("last", earlier[-1:])]
    if b.instance is not None:
        here = [c for c in earlier if _place(sequences[c].iloc[0])[0] == b.instance]
        if here and here != earlier[-1:]:
            chains.append(("instance", here))
    if len(earlier) > 1 and all(earlier != chain for _, chain in chains):
        chains.append(("all", earlier))
    return [Hypothesis("stale", tuple(s for c in chain for s in _sends(_answered(sequences[c]))) + suffix, form,
                       _source(sequences[chain[-1]], began)) for form, chain in chains]


def _foreign(b: Broken, sequences: dict[int, pd.DataFrame], suffix: tuple[Send, ...]) -> list[Hypothesis]:
    """Other sequences' histories continued (as executed before step k; as sent before; with a
    given-up request), for the best-placed candidates, and the first one's mixed with its own."""
    mine = sequences[b.sequence]
    began = float(mine["t_send"].min())
    candidates = _foreign_candidates(b, sequences, mine[mine["step"] == b.step].iloc[0])[:MAX_SOURCES]
    out = []
    for c, before, sent_before, given_up in candidates:
        source = _source(sequences[c], began)
        for form, rows in (("replace", before), ("sent", sent_before), ("given_up", given_up)):
            if rows is not None:
                out.append(Hypothesis("foreign", _sends(rows) + suffix, form, source))
    if candidates and b.step > 0:
        c, before = candidates[0][0], candidates[0][1]
        merged = pd.concat([_answered(mine[mine["step"] < b.step]), before]).sort_values("t_send", kind="stable")
        out.append(Hypothesis("foreign", _sends(merged) + suffix, "mix", _source(sequences[c], began)))
    return out


def _suffix(b: Broken, mine: pd.DataFrame, lengths: list[int]) -> tuple[Send, ...]:
    """The session's compared steps from k, with their own START flags, and a closing request
    (the session's next step, or the last again) where the last compared one did not carry END."""
    rows = mine[mine["step"] >= b.step].head(len(b.observed))
    sends = [Send(b.session, int(r.step), bool(r.start), True) for r in rows.itertuples()]
    last = rows.iloc[-1]
    if not bool(last["end"]):
        following = int(last["step"]) + 1
        step = following if b.session < len(lengths) and following < lengths[b.session] else int(last["step"])
        sends.append(Send(b.session, step))
    return tuple(sends)


def _answered(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows["error"] == ""]


def _sends(rows: pd.DataFrame) -> tuple[Send, ...]:
    return tuple(Send(int(r.session), int(r.step), bool(r.start)) for r in rows.itertuples())


def _place(row: pd.Series) -> tuple[str | None, int | None]:
    """(instance, slot) the log gave the row's sequence; None where it did not say."""
    instance, slot = row.get("instance"), row.get("slot")
    return (instance if isinstance(instance, str) else None, None if _missing(slot) else int(slot))


def _missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value))


def _source(rows: pd.DataFrame, began: float) -> Source:
    first = rows.iloc[0]
    instance, slot = _place(first)
    return {"conversation": int(first["conversation"]), "session": int(first["session"]), "corrid": str(first["corrid"]),
            "role": str(first["role"]), "instance": instance, "slot": slot,
            # it sent nothing after this session's first request: it had stopped or ended before
            "ended_before": bool(float(rows["t_send"].max()) < began)}


def _foreign_candidates(b: Broken, sequences: dict[int, pd.DataFrame],
                        row_k: pd.Series) -> list[tuple[int, pd.DataFrame, pd.DataFrame | None, pd.DataFrame | None]]:
    """(sequence number, rows before step k, rows sent before where that differs, with the given-up
    request where it had one) for the other sequences, best placed and nearest first."""
    place = _place(row_k)
    t_k = float(row_k["t_send"])
    ranked = []
    for c, rows in sequences.items():
        if c == b.sequence or str(rows.iloc[0]["corrid"]) == b.corrid:
            continue
        answered = _answered(rows)
        before = answered[_executed_before(answered, row_k)]
        if before.empty:
            continue
        sent = answered[answered["t_send"] < t_k]
        sent_before = sent if len(sent) != len(before) else None
        gave_up = rows[(rows["outcome"] == "cancel_target") & (rows["t_send"] < t_k)]
        given_up = pd.concat([before, gave_up]).sort_values("t_send") if len(gave_up) else None
        other = _place(rows.iloc[0])
        if place[0] is None or other[0] is None:
            rank = 2
        elif other[0] != place[0]:
            rank = 3
        else:
            rank = 0 if other[1] == place[1] else 1
        ranked.append((rank, t_k - float(before["t_send"].max()), c, before, sent_before, given_up))
    ranked.sort(key=lambda r: (r[0], r[1], r[2]))
    return [(c, before, sent, given) for _, _, c, before, sent, given in ranked]


def _executed_before(rows: pd.DataFrame, row_k: pd.Series) -> pd.Series:
    """Requests that ran before step k: by the trace where both were traced, else replied before it was sent."""
    start_k = row_k.get("exec_start")
    if not _missing(start_k) and "exec_end" in rows:
        ends = pd.to_numeric(rows["exec_end"], errors="coerce")
        traced = ends.notna()
        return (traced & (ends <= float(start_k))) | (~traced & (rows["t_recv"] <= float(row_k["t_send"])))
    return rows["t_recv"] <= float(row_k["t_send"])


def matched(observed: tuple[Observed, ...], replies: Sequence[Mapping[str, Array | None] | None], tolerances: list[compare.Tolerance]) -> int:
    """How many steps from k the replayed replies match, in a row (0: the first does not)."""
    n = 0
    for want, got in zip(observed, replies, strict=False):
        if got is None:
            break
        if any(compare.difference(want.get(t.output), got.get(t.output), t.datatype) > t.value for t in tolerances):
            break
        n += 1
    return n


def classify(b: Broken, tried: list[tuple[Hypothesis, int]]) -> Session:
    """The session's class from the hypotheses tried and their scores (in trial order)."""
    best: tuple[Hypothesis, int] | None = None
    for hypothesis, score in tried:
        if score > 0 and (best is None or score > best[1]):
            best = (hypothesis, score)
    entry: Session = {"conversation": b.sequence, "session": b.session, "corrid": b.corrid, "role": b.role, "step": b.step,
             "instance": b.instance, "slot": b.slot, "class": best[0].kind if best else "other",
             "matched": best[1] if best else 0, "compared": len(b.observed), "tried": len(tried)}
    if best and best[0].source is not None:
        entry["form"], entry["source"] = best[0].form, best[0].source.copy()
    return entry


def advice_code(entry: Session, scheduler: str) -> str | None:
    """What one diagnosed session says to do (a DIAGNOSES code); None for other."""
    kind = entry["class"]
    if kind == "lost":
        return "lost_state"
    if kind == "stale":
        return "stale_state"
    if kind == "foreign":
        if entry["step"] == 0 and entry["source"]["ended_before"]:
            return "stale_state"  # it began with what a stopped sequence left: START did not reset it
        return "foreign_state_oldest" if scheduler == "oldest" else "foreign_state_direct"
    return None


def advice(entries: list[Session], scheduler: str) -> str | None:
    """The check's advice: the strongest evidence among its diagnosed sessions. A session that
    answered with another's state shows that state crosses sessions, which also explains one that
    found none (under oldest, a batch row that no session, or one that ended, had written): foreign
    first, then stale (it continued a stopped sequence), then lost; None when every one is other."""
    codes = {advice_code(e, scheduler) for e in entries}
    return next((code for code in ADVICE_CODES if code in codes), None)


def attach(judgement: CheckJudgement, diagnosed: dict[str, Summary]) -> CheckJudgement:
    """The judgement with each diagnosed verdict's values["diagnosis"], and its checks moved to
    their advice code in `diagnoses` (the judge's own grouping and skip rule otherwise kept)."""
    verdicts = [CheckVerdict(v.check, v.variant, v.verdict, v.reason, {**v.values, "diagnosis": diagnosed[v.id]}) if v.id in diagnosed else v
                for v in judgement.verdicts]
    groups: dict[str, list[str]] = {}
    for entry in judgement.diagnoses:
        for check in entry["checks"]:
            summary = diagnosed.get(check)
            code = (summary["advice"] if summary else None) or entry["code"]
            groups.setdefault(code, []).append(check)
    return dataclasses.replace(judgement, verdicts=verdicts, diagnoses=[{"code": c, "checks": ids} for c, ids in groups.items()])


def summary(p: Plan, entries: list[Session], replayed: int, scheduler: str) -> Summary:
    """A verdict's values["diagnosis"]."""
    return {"sessions": entries, "broken_sessions": p.broken_sessions, "diagnosed": len(entries), "replayed": replayed,
            "advice": advice(entries, scheduler), "caps": dict(CAPS)}
