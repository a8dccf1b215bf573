"""What a run's raw recogniser outputs prove, read straight from STATE_OWNER (no verdict logic).

verdicts.judge explains each session for the learner; these checks answer the course's
claims from the model's own report of whose state every chunk read, so the benchmarks and
tests can hold judge and the scenarios to it. A shared deployment keeps cells from earlier
runs, so "sessions mixed" must mean: the owner is ANOTHER SESSION OF THIS RUN.
"""
from __future__ import annotations

import pandas as pd

from app.lab.records import RunResult
from app.recogniser.engine.judgement.verdicts import PADDING_OWNER


def _answered(requests: pd.DataFrame) -> pd.DataFrame:
    return requests[requests["error"] == ""]


def owners_read(result: RunResult) -> set[int]:
    """Every STATE_OWNER the run's answered chunks reported."""
    return {int(o) for o in _answered(result.requests)["state_owner"]}


def owner_at_first_wrong(result: RunResult, session: int) -> int | None:
    """STATE_OWNER of the session's first wrong chunk (None: intact, or that chunk was refused)."""
    row = result.sessions.set_index("session").loc[session]
    if pd.isna(row["first_wrong"]):
        return None
    q = _answered(result.requests)
    hit = q[(q["session"] == session) & (q["chunk"] == int(row["first_wrong"]))]
    return None if hit.empty else int(hit.iloc[0]["state_owner"])


def read_other_sessions(result: RunResult) -> pd.DataFrame:
    """Answered chunks whose STATE_OWNER is ANOTHER session of this run, with that session's
    index in `owner_session`: state mixed between sessions within this very run."""
    index_of = {p.tag: p.index for p in result.plans}
    q = _answered(result.requests).copy()
    q["owner_session"] = [index_of.get(int(o), -1) for o in q["state_owner"]]
    return q[(q["owner_session"] >= 0) & (q["owner_session"] != q["session"])]


def mixing_broke_chunks(result: RunResult) -> pd.DataFrame:
    """Chunks that read another session's state of this run AND came back wrong."""
    mixed = read_other_sessions(result)
    return mixed[mixed["symbol"].astype(int) != mixed["expected"].astype(int)]


def broke_on_another_session(result: RunResult) -> dict[int, int]:
    """Session -> the session of THIS run whose state its first wrong chunk read."""
    index_of = {p.tag: p.index for p in result.plans}
    out = {}
    for plan in result.plans:
        owner = owner_at_first_wrong(result, plan.index)
        if owner in index_of and owner != plan.tag:
            out[plan.index] = index_of[owner]
    return out


def broke_on_padding(result: RunResult) -> list[int]:
    """Sessions whose first wrong chunk read state a padding row (READY=0) wrote."""
    return [p.index for p in result.plans if owner_at_first_wrong(result, p.index) == PADDING_OWNER]


def read_only_own_state(result: RunResult) -> bool:
    """Every answered chunk read a fresh cell or state its own session wrote: nobody else's."""
    q = _answered(result.requests)
    owner = q["state_owner"].astype("uint64")
    return bool(((owner == 0) | (owner == q["tag"].astype("uint64"))).all())


def strangers_read(result: RunResult) -> set[int]:
    """Owners read that are neither fresh, padding, nor any session of this run: earlier runs."""
    return owners_read(result) - {0, PADDING_OWNER} - {p.tag for p in result.plans}
