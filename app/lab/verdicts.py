"""Judge each session's transcript: intact, or where it broke and whose state it read.

At the first wrong chunk k the recogniser's diagnostics say why: STATE_IN is the state it
read (it should be the previous expected symbol) and STATE_OWNER the session tag of
whoever wrote that state (0 for a fresh cell, all ones for a padding row).
"""
from __future__ import annotations

import pandas as pd

from app.lab.alphabet import to_text

PADDING_OWNER = 2**64 - 1
EXPLANATIONS = {
    "intact": "every symbol right",
    "lost": "its state came back fresh or stale: the chunk reached a cell without its history",
    "foreign": "it read state another session wrote",
    "garbage": "padding or unreadable data was folded into its state",
    "error": "the server refused a chunk",
}


def judge(requests: pd.DataFrame, plans) -> pd.DataFrame:
    tags = {p.tag: p.index for p in plans}
    rows = []
    for plan in plans:
        mine = requests[requests["session"] == plan.index].sort_values("chunk")
        expected = plan.symbols[: plan.send_count]
        received = [int(s) if not e else -1 for s, e in zip(mine["symbol"], mine["error"])]
        received += [-1] * (len(expected) - len(received))  # chunks never sent after a refusal
        first_wrong = next((k for k, (e, r) in enumerate(zip(expected, received)) if e != r), None)
        verdict, culprit, detail = "intact", None, ""
        if first_wrong is not None:
            verdict, culprit, detail = _cause(mine, plan, expected, first_wrong, tags)
        rows.append(
            {
                "session": plan.index,
                "corrid": str(plan.corrid),
                "tag": plan.tag,
                "expected_text": to_text(expected),
                "received_text": to_text(received),
                "chunks": len(expected),
                "first_wrong": first_wrong,
                "verdict": verdict,
                "read_state_of": culprit,
                "detail": detail,
                "wrong_symbols": sum(e != r for e, r in zip(expected, received)),
                "instances": sorted(int(i) for i in mine["instance"].unique() if i >= 0),
                "slots": sorted({(int(i), int(s)) for i, s in zip(mine["instance"], mine["slot"]) if i >= 0}),
            }
        )
    return pd.DataFrame(rows)


def _cause(mine: pd.DataFrame, plan, expected: list[int], k: int, tags: dict[int, int]):
    hit = mine[mine["chunk"] == k]
    if hit.empty or hit.iloc[0]["error"]:
        message = hit.iloc[0]["error"] if not hit.empty else "not sent after an earlier refusal"
        return "error", None, f"chunk {k + 1}: {message}"
    row = hit.iloc[0]
    owner, state_in = int(row["state_owner"]), int(row["state_in"])
    should_read = expected[k - 1] if k > 0 else 0
    where = f"chunk {k + 1} ran on instance {int(row['instance'])}, slot {int(row['slot'])}"
    if owner == PADDING_OWNER:
        return "garbage", "padding", f"{where} and read state a padding row had written"
    if state_in == should_read:
        return "garbage", None, f"{where}; its state was right but its audio was misread"
    if owner == 0 or owner == plan.tag:
        kind = "a fresh cell" if owner == 0 else "its own stale state"
        return "lost", None, f"{where} and read {kind} ({state_in} instead of {should_read})"
    other = tags.get(owner)
    who = f"session {other + 1}" if other is not None else f"an earlier session (tag {owner})"
    return "foreign", (other if other is not None else "earlier run"), f"{where} and read the state of {who}"
