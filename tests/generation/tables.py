"""Hand-made tables of a generation run, as app/generation/figures.py and the judges read them."""
from __future__ import annotations

import pandas as pd


def tokens(mode: str = "inflight", wrong_at: tuple[int, int] | None = None) -> pd.DataFrame:
    """Three requests on one instance with four rows: tag 1 runs five steps from execution 0, tag 2 joins at
    execution 1 for three, tag 3 joins at execution 3 for two. wrong_at=(tag, step) marks that token wrong,
    continuing the state of the request in the row before it."""
    plan = {1: (0, 5), 2: (1, 3), 3: (3, 2)}
    rows = []
    for tag, (start, n) in plan.items():
        for step in range(n):
            execution = start + step
            row = sorted(t for t, (s, k) in plan.items() if s <= execution < s + k).index(tag)
            rows.append(dict(mode=mode, tag=tag, instance=0, execution=execution, tick=execution, row=row, batch=0, step=step,
                             last=step == n - 1, t_s=0.02 * (execution + 1), wrong=False, owner=tag))
    frame = pd.DataFrame(rows)
    frame["batch"] = frame.groupby("execution")["tag"].transform("size")
    if wrong_at is not None:
        hit = (frame["tag"] == wrong_at[0]) & (frame["step"] == wrong_at[1])
        frame.loc[hit, "wrong"] = True
        frame.loc[hit, "owner"] = 1 if wrong_at[0] != 1 else 2
    return frame


def requests(mode: str, ttft: list[float], e2e: list[float]) -> pd.DataFrame:
    return pd.DataFrame(dict(mode=mode, tag=range(1, len(ttft) + 1), ttft_ms=ttft, e2e_ms=e2e,
                             tokens=[5] * len(ttft)))


def steps(mode: str, rows: list[int], max_batch_size: int = 4) -> pd.DataFrame:
    return pd.DataFrame(dict(mode=mode, instance=0, tick=range(len(rows)), rows=rows,
                             fill=[r / max_batch_size for r in rows]))
