"""Judge each session's transcript: intact, or where it broke and whose state it read.

At the first wrong chunk k the recogniser's diagnostics say why: STATE_IN is the state it
read (it should be the previous expected symbol) and STATE_OWNER the session tag of
whoever wrote that state (0 for a fresh cell, all ones for a padding row).

The judgement is codes and values only (a SessionVerdict, a Detail and the numbers behind it);
the words for people live in app/text/verdicts.py and are rendered at the page or CLI.
"""
from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

import pandas as pd

from app.lab.records import SessionPlan
from app.lab.scenario.alphabet import to_text

PADDING_OWNER = 2**64 - 1


class SessionVerdict(str, Enum):
    INTACT = "intact"  # every symbol right
    LOST = "lost"  # its state came back fresh or stale
    FOREIGN = "foreign"  # it read state another session wrote
    GARBAGE = "garbage"  # padding or unreadable data was folded into its state
    ERROR = "error"  # the server refused a chunk


class Detail(str, Enum):
    """Where and how a session broke, at its first wrong chunk (value columns say the rest)."""

    NONE = ""  # intact
    REFUSED = "refused"  # the server refused the chunk: `error` holds its own words
    NOT_SENT = "not_sent"  # never sent, after an earlier refusal
    READ_PADDING = "read_padding"  # read state a padding row had written
    MISREAD = "misread"  # its state was right but its audio was misread
    FRESH_CELL = "fresh_cell"  # read a fresh cell (state_in instead of should_read)
    OWN_STALE = "own_stale"  # read its own stale state (state_in instead of should_read)
    OTHER_SESSION = "other_session"  # read the state of session `other_session` of this run
    EARLIER_SESSION = "earlier_session"  # read the state of a session of an earlier run (tag `owner_tag`)


VERDICTS = tuple(v.value for v in SessionVerdict)
# The values a Detail may carry in the `detail_values` column (a dict per session):
# instance, slot (where the first wrong chunk ran), state_in, should_read (lost),
# other_session (0-based index, foreign), owner_tag (earlier run), error (Triton's own words).


def judge(requests: pd.DataFrame, plans: Sequence[SessionPlan]) -> pd.DataFrame:
    tags = {p.tag: p.index for p in plans}
    rows = []
    for plan in plans:
        mine = requests[requests["session"] == plan.index].sort_values("chunk")
        expected = plan.symbols[: plan.send_count]
        received = [int(s) if not e else -1 for s, e in zip(mine["symbol"], mine["error"], strict=True)]
        received += [-1] * (len(expected) - len(received))  # chunks never sent after a refusal
        first_wrong = next((k for k, (e, r) in enumerate(zip(expected, received, strict=True)) if e != r), None)
        verdict: SessionVerdict
        culprit: str | int | None
        values: dict[str, object]
        verdict, culprit, detail, values = SessionVerdict.INTACT, None, Detail.NONE, {}
        if first_wrong is not None:
            verdict, culprit, detail, values = _cause(mine, plan, expected, first_wrong, tags)
        rows.append(
            {
                "session": plan.index,
                "corrid": str(plan.corrid),
                "tag": plan.tag,
                "expected_text": to_text(expected),
                "received_text": to_text(received),
                "chunks": len(expected),
                "first_wrong": first_wrong,
                "verdict": verdict.value,
                "read_state_of": culprit,
                "detail_code": detail.value,
                "detail_values": values,
                "wrong_symbols": sum(e != r for e, r in zip(expected, received, strict=True)),
                "instances": sorted(int(i) for i in mine["instance"].unique() if i >= 0),
                "slots": sorted({(int(i), int(s)) for i, s in zip(mine["instance"], mine["slot"], strict=True) if i >= 0}),
            }
        )
    return pd.DataFrame(rows)


def _cause(mine: pd.DataFrame, plan: SessionPlan, expected: list[int], k: int,
           tags: dict[int, int]) -> tuple[SessionVerdict, str | int | None, Detail, dict[str, object]]:
    hit = mine[mine["chunk"] == k]
    if hit.empty:
        return SessionVerdict.ERROR, None, Detail.NOT_SENT, {}
    if hit.iloc[0]["error"]:
        return SessionVerdict.ERROR, None, Detail.REFUSED, {"error": str(hit.iloc[0]["error"])}
    row = hit.iloc[0]
    owner, state_in = int(row["state_owner"]), int(row["state_in"])
    should_read = expected[k - 1] if k > 0 else 0
    where: dict[str, object] = {"instance": int(row["instance"]), "slot": int(row["slot"])}
    if owner == PADDING_OWNER:
        return SessionVerdict.GARBAGE, "padding", Detail.READ_PADDING, where
    if state_in == should_read:
        return SessionVerdict.GARBAGE, None, Detail.MISREAD, where
    if owner == 0 or owner == plan.tag:
        detail = Detail.FRESH_CELL if owner == 0 else Detail.OWN_STALE
        return SessionVerdict.LOST, None, detail, {**where, "state_in": state_in, "should_read": should_read}
    other = tags.get(owner)
    if other is not None:
        return SessionVerdict.FOREIGN, other, Detail.OTHER_SESSION, {**where, "other_session": other}
    return SessionVerdict.FOREIGN, "earlier run", Detail.EARLIER_SESSION, {**where, "owner_tag": owner}
