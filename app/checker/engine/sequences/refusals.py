"""Why the server refused a request, and what a check that breaks on the refusal says about the
deployment (REFUSAL_DIAGNOSES). Pure: the measured steps in, codes and values out.

A request the server refused is never a wrong output, nor a held session (judge.py): its cause,
read from Triton's message and the sequence's timing, names a split sequence (a balancer sent a
step to a server with no record of its sequence), the idle reaper, or a server that refused or did
not answer.
"""
from __future__ import annotations

import pandas as pd

from app.checker.engine.sequences import slow_client
from app.lab.observation import START_REFUSAL

# A refusal's cause (refusal_cause) -> the diagnosis of a check that breaks on it (words: app/checker/words.DIAGNOSES)
REFUSAL_DIAGNOSES = {"sequence_ended": "sequence_split", "reaped_after_backlog": "reaped", "idle_gap": "reaped",
                     "timed_out": "requests_refused", "no_answer": "requests_refused", "server_error": "requests_refused"}


def refusals_of(steps: pd.DataFrame, idle_s: float) -> pd.DataFrame:
    """Every refused request (the checker's own given-up request and the slow client's late step
    excepted: refusing those is what the checks provoke), with what caused it."""
    columns = ["row", "phase", "variant", "role", "session", "step", "corrid", "error", "cause", "waited_s"]
    failed = steps[(steps["error"] != "") & ~steps["outcome"].isin(("cancel_target", slow_client.LATE, "not_sent"))]
    if failed.empty:
        return pd.DataFrame(columns=columns)
    records = []
    for index, row in failed.iterrows():
        sequence = steps[steps["conversation"] == row["conversation"]].sort_values("step")
        first = sequence.iloc[0]
        waited = float(first["t_recv"] - first["t_send"])
        earlier = sequence[sequence["step"] < row["step"]]
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
