"""Small hand-made measurement tables for the pure judge's tests (no server)."""
from __future__ import annotations

import pandas as pd

from app.checker.engine import CheckOptions, ModelFacts, TensorSpec
from app.checker.engine.sequences.measure import COLUMNS, Tables


def facts(sequence: bool = True, outputs=(("OUTPUT", "INT64"),), instances: int = 2, slots: int = 2, idle_us: int = 1_000_000) -> ModelFacts:
    return ModelFacts(
        name="m", version="1", scheduler="direct" if sequence else "dynamic", max_batch_size=slots, instances=instances,
        instance_kind="KIND_CPU", slots_per_instance=slots if sequence else 0, idle_timeout_us=idle_us if sequence else 0,
        decoupled=False, corrid_type=None, controls=("START", "END", "READY") if sequence else (),
        inputs=(TensorSpec("INPUT", "INT32", (2,)),), outputs=tuple(TensorSpec(n, t, (1,)) for n, t in outputs),
    )


class Rows:
    """Rows of a steps table; each add() is one request. Times default to the order added. With
    golden=True the rows have gold.<OUTPUT> columns: `gold` (a number or {output: number}) is a
    row's difference from its golden output, None where it has none."""

    def __init__(self, outputs=("OUTPUT",), golden: bool = False):
        self.outputs = outputs
        self.golden = golden
        self.rows: list[dict] = []

    def add(self, phase: str, role: str = "alone", sequence: int = 0, session: int = 0, step: int = 0, diff=0.0, pass_: str = "",
            variant: str = "alone", error: str = "", corrid: str = "7", judged: bool = True, outcome: str = "", t: float | None = None,
            recv: float | None = None, gold=0.0, nonfinite: dict | None = None, **extra) -> Rows:
        t = float(len(self.rows)) if t is None else t
        row = {"phase": phase, "pass": pass_, "variant": variant, "role": role, "conversation": sequence, "session": session,
               "step": step, "corrid": corrid, "start": step == 0, "end": False, "request_id": f"r{len(self.rows)}", "t_send": t,
               "t_recv": t + 0.01 if recv is None else recv, "error": error, "judged": judged, "outcome": outcome, "values": None,
               "golden": None, "nonfinite": None if error else nonfinite}
        diffs = diff if isinstance(diff, dict) else {name: diff for name in self.outputs}
        golds = gold if isinstance(gold, dict) else {name: gold for name in self.outputs}
        for name in self.outputs:
            row[f"diff.{name}"] = diffs.get(name) if not error else None
            if self.golden:
                row[f"gold.{name}"] = golds.get(name) if not error else None
        row.update(extra)
        self.rows.append(row)
        return self

    def reference(self, sequences: int = 2, steps: int = 2, diff=0.0, **kw) -> Rows:
        """Both lone runs of `sequences` sessions of `steps` steps; pass b differs by diff."""
        for pass_ in ("a", "b"):
            for s in range(sequences):
                for k in range(steps):
                    self.add("reference", "alone", 100 * (pass_ == "b") + s, s, k, None if pass_ == "a" else diff, pass_=pass_, **kw)
        return self

    def frame(self) -> pd.DataFrame:
        columns = list(COLUMNS) + [f"diff.{n}" for n in self.outputs] + ([f"gold.{n}" for n in self.outputs] if self.golden else [])
        frame = pd.DataFrame(self.rows)
        for column in columns + ["instance", "slot", "execution", "exec_start", "exec_end", "lane", "follows", "ended_by"]:
            if column not in frame:
                frame[column] = None
        frame["follows"] = frame["follows"].fillna("")
        return frame


def tables(rows: Rows, model_facts: ModelFacts | None = None, options: CheckOptions | None = None, phases=None, skipped=None,
           lengths=(2, 2), data_lengths=()) -> Tables:
    model_facts = model_facts or facts()
    types = {o.name: o.datatype for o in model_facts.outputs}
    outputs = pd.DataFrame([{"name": n, "datatype": types[n], "compared": True, "ignored_by": ""} for n in rows.outputs])
    return Tables(
        facts=model_facts, options=options or CheckOptions(), steps=rows.frame(), outputs=outputs,
        phases=pd.DataFrame(phases or [], columns=["phase", "variant", "model", "started_s", "wall_s", "requests", "workers", "capacity",
                                                   "overflow", "traced", "placed"]),
        skipped=pd.DataFrame(skipped or [], columns=["check", "variant", "reason", "values"]),
        lengths=list(lengths), golden=rows.golden, data_lengths=list(data_lengths),
    )
