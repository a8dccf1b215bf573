"""What a test may assert of a session that keeps sending under a sequence idle timeout.

Triton stamps a sequence's idle clock at each request's arrival (Enqueue, sequence_batch_scheduler.cc)
and reaps it when the next comes later than max_sequence_idle_microseconds. A session's gaps are its
think time plus a reply's latency, which a loaded runner can stretch past a timeout it is far under
on an idle machine; then Triton rightly reaps it. So the gaps the run had decide: under the timeout
(less a margin for the client's clock against the server's arrival stamps) the session must be
intact; past it, it may also have been reaped.
"""
from __future__ import annotations

import pandas as pd

CLOCK_MARGIN = 0.8  # share of the timeout a client-side gap must stay under to count as certainly under it


def largest_gaps_s(requests: pd.DataFrame) -> pd.Series:
    """Per session, the longest time between two of its sends (the driver's t_send, seconds)."""
    return requests.sort_values("t_send").groupby("session")["t_send"].apply(lambda t: t.diff().max())


def assert_intact_unless_idle_too_long(verdict: str, gap_s: float, timeout_s: float, what: object) -> None:
    if gap_s < CLOCK_MARGIN * timeout_s:
        assert verdict == "intact", (what, gap_s)
    else:
        assert verdict in ("intact", "error"), (what, gap_s)
