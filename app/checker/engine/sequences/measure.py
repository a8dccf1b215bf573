"""Run the guide's experiments on a live server and record every request: tables, no verdicts.

Sequence batcher, on all instances and then on a temporary one-instance copy:
  reference      every session alone (one request in flight), twice, with fresh IDs; the first
                 run is the reference every later reply is compared with, the second measures
                 the model's own nondeterminism;
  interleaved    every session again, with more sessions in flight than the model has slots
                 (instances x slots), so some wait in the backlog; short and long sessions, random gaps;
                 its start is ordered so the backlog forms by construction (backlog_gate.py);
  id_reuse       a wave that fills every slot and ends, then a wave that reuses each of its IDs
                 (so freed slots, on every instance, get reused IDs), then a chain of lone
                 sessions on one reused ID, one more than there are instances;
  abandon_round  the slots filled by holders and two victims: one stops without END (left to the
                 idle timeout read from the config), one gives up on a request (a client timeout
                 shorter than any reply) and stops; a follower per victim waits in the backlog and takes the
                 freed slot. Holders, and followers already in, keep their slots until every follower is
                 served, spreading their steps (at most 0.4 of the idle timeout apart), so the freed slots
                 are the victims'.
  slow_client    (all instances, a client fault: CheckOptions.faults) a victim's client quiet past the
                 idle timeout beside neighbours, its late step refused, then its session again from
                 START under the same ID (app/checker/engine/sequences/slow_client.py).
Dynamic or no batcher: every request alone twice (reference), then all of them concurrently in
two shuffled orders (batches of other compositions), then alone again in another order after
that traffic (after_traffic). A model whose config turns the response cache on is answered from
the server's cache when the server has one: if its statistics count cache hits during the second
lone run, every later request would be one too, so the three checks are skipped (`response_cache`)
instead of passing on stored answers; only the first lone run reached the model, and its refusals
are still reported. A server without a cache runs the model for every request, and the checks run.

Each reply is compared with the reference as it arrives (app/checker/engine/compare.py), and with
its step's golden output where the data file has validation_data, and only the differences are
kept (and, for a float reply holding NaN or Inf, its first elements), so memory grows with the
sessions' steps, not with their outputs. A phase runs when a check asked for judges it
(app/checker/engine/checks.py, CheckOptions.runs). The replies that differ beyond any
tolerance are kept too, up to a cap, for the diagnosis (app/checker/engine/sequences/observed.py).
Where the server can tell (app/checker/engine/sequences/placement.py), rows get the slot their sequence held
(the log at verbosity 1) and the execution they ran in (the trace).
"""
from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from app.checker.engine import checks, compare
from app.checker.engine.aliases import Arrays
from app.checker.engine.facts import ModelFacts
from app.checker.engine.options import CheckOptions
from app.checker.engine.sequences import placement, sequence_rounds, slow_client, stateless_rounds
from app.checker.engine.target import CopySkipped, Target
from app.checker.engine.witness import Witness
from app.lab.observation import server_log, server_trace
from app.lab.progress import Progress

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from app.checker.engine.inputs import InputSource

from app.checker.engine.sequences.measurement import COLUMNS, Measurement, stage

__all__ = ["COLUMNS", "Measurement", "Tables", "measure", "planned_requests", "stage"]


@dataclass
class Tables:
    """What measure() saw. `steps` has one row per request sent; `diff.<OUTPUT>` columns hold
    its difference from the reference (NaN for the reference run itself and where it has no
    reference step), `values` the first elements of both where they differ; with golden outputs,
    `gold.<OUTPUT>` its difference from the step's golden output (NaN where none) and `golden`
    the first elements where they differ; `nonfinite` the first elements of each compared float
    output that holds NaN or Inf (None: none does). `outputs` says which outputs were compared;
    `phases` one row per phase run; `skipped` what was not run and why (codes and values);
    `data_lengths` each of the data file's sequences' length (empty for generated inputs): session i
    plays sequence i % len(data_lengths) (the report's inputs.streams, perf_analyzer's word)."""

    facts: ModelFacts
    options: CheckOptions
    steps: pd.DataFrame
    outputs: pd.DataFrame
    phases: pd.DataFrame
    skipped: pd.DataFrame
    lengths: list[int] = field(default_factory=list)
    input_source: str = "generated"
    where: str = "embedded"
    traced: bool = False
    placed: bool = False
    golden: bool = False  # the data file has golden outputs (validation_data)
    data_lengths: list[int] = field(default_factory=list)
    # For the diagnosis and the export (app/checker/engine/sequences/observed.py): the replies that differed
    # from their references, by request_id; the lone references, by (session, step); and the
    # requests whose differing replies were past the memory cap and not kept.
    observed: dict[str, Arrays] = field(default_factory=dict)
    references: dict[tuple[int, int], Arrays] = field(default_factory=dict)
    unobserved: set[str] = field(default_factory=set)
    # Each witnessed check's evidence that its situation happened, by (check, variant) (witness.py);
    # None: tables no measurement wrote (a hand-built test's), whose verdicts carry no witness.
    witnesses: dict[tuple[str, str], Witness] | None = None
    # The interleaved run's most pending requests in Triton's metrics, by variant (backlog_gate.py)
    pending_peaks: dict[str, float | None] = field(default_factory=dict)


def planned_requests(facts: ModelFacts, lengths: list[int], options: CheckOptions) -> int:
    """About how many requests measure() sends (for a progress bar)."""
    total = sum(lengths)
    if not facts.sequence:
        return total * (2 + 2 * options.runs("concurrent", sequence=False) + options.runs("after_traffic", sequence=False))
    variants = 2 if options.one_instance and facts.instances > 1 else 1
    mean = total / max(1, len(lengths))
    per_variant = total + (2 * min(facts.capacity, len(lengths)) + facts.instances + 1) * mean + (facts.capacity + 2) * mean
    return int(2 * total + variants * per_variant)


def measure(target: Target, facts: ModelFacts, source: InputSource, lengths: list[int], options: CheckOptions,
            progress: Progress | None = None, copy: Callable[[], AbstractContextManager[str]] | None = None) -> Tables:
    """Run every phase the model's scheduler calls for. `copy()` returns a context manager that
    yields the one-instance copy's name (target.one_instance_copy), or raises CopySkipped."""
    m = Measurement(target, facts, source, options, progress, planned_requests(facts, lengths, options))
    m.lengths = lengths
    m._stamps, m._places = [], []
    model = target.model
    if facts.sequence:
        sequence_rounds.reference(m, model)
        with server_log.raised_verbosity(m.server, 1):
            _sequence_phases(m, model, "all_instances", facts.capacity, facts.instances)
            if options.one_instance:
                _one_instance(m, copy)
            else:
                for check in _one_instance_checks(options):
                    m.skip(check, "one_instance", "not_requested")
    else:
        stateless_rounds.stateless(m, model)
    return _tables(m, target, source)


def _sequence_phases(m: Measurement, model: str, variant: str, capacity: int, instances: int) -> None:
    if m.options.runs("interleaved", sequence=True, variant=variant):
        sequence_rounds.interleaved(m, model, variant, capacity)
    if m.options.runs("id_reuse", sequence=True, variant=variant):
        sequence_rounds.id_reuse(m, model, variant, capacity, instances)
    if m.options.runs("abandon_round", sequence=True, variant=variant):
        sequence_rounds.abandon_round(m, model, variant, capacity)
    if variant == checks.ALL_INSTANCES and m.options.faults and m.options.wants(slow_client.CHECK):
        slow_client.play(m, model, variant, capacity)


def _one_instance_checks(options: CheckOptions) -> list[str]:
    """The checks asked for that have a verdict on the one-instance copy."""
    return [c.code for c in checks.for_path(sequence=True) if options.wants(c.code) and checks.ONE_INSTANCE in c.variants]


def _one_instance(m: Measurement, copy: Callable[[], AbstractContextManager[str]] | None) -> None:
    codes = _one_instance_checks(m.options)
    if not codes:
        return
    if copy is None:
        for check in codes:
            m.skip(check, "one_instance", "no_model_files", model=m.facts.name)
        return
    with ExitStack() as stack:
        try:
            name = stack.enter_context(copy())
        except CopySkipped as skipped:
            for check in codes:
                m.skip(check, "one_instance", skipped.reason, **skipped.values)
            return
        _sequence_phases(m, name, "one_instance", m.facts.slots_per_instance, 1)


def _tables(m: Measurement, target: Target, source: InputSource) -> Tables:
    steps = m.recorder.frame()
    if m._stamps:
        stamps = pd.concat(m._stamps, ignore_index=True).drop_duplicates("request_id")
        steps = steps.merge(stamps, on="request_id", how="left")
    else:
        for column in server_trace.COLUMNS[1:]:
            steps[column] = pd.NA
    if m._places:
        places = pd.concat(m._places, ignore_index=True)
        steps = steps.merge(places, on="request_id", how="left")
    else:
        steps["instance"] = None
        steps["slot"] = pd.NA
        steps["ended_by"] = None
    steps["follows"] = placement.followers(steps)
    steps = placement.executions(steps)
    outputs = pd.DataFrame(
        [{"name": o.name, "datatype": o.datatype, "compared": o in m.compared,
          "ignored_by": "user" if o.name in m.options.ignore_outputs else ("lab" if o.name in compare.default_ignored(m.facts) else "")}
         for o in m.facts.outputs],
        columns=["name", "datatype", "compared", "ignored_by"],
    )
    return Tables(
        facts=m.facts, options=m.options, steps=steps, outputs=outputs,
        phases=pd.DataFrame(m.phases, columns=["phase", "variant", "model", "started_s", "wall_s", "requests", "workers", "capacity",
                                               "overflow", "traced", "placed"]),
        skipped=pd.DataFrame(m.skipped, columns=["check", "variant", "reason", "values"]),
        lengths=list(m.lengths), input_source=source.source, where=target.where,
        traced=bool(m._stamps) and any(not s.empty for s in m._stamps), placed=m.placed,
        golden=source.golden is not None, data_lengths=[len(s) for s in getattr(source, "sequences", [])],
        observed=m.observations.arrays, references=m.references, unobserved=m.observations.unkept, witnesses=m.witnesses, pending_peaks=m.pending_peaks,
    )
