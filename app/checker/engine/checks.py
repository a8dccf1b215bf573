"""Every check the checker makes, declared once, as data: which replies it judges, how, and what
its breaking says about the model. Pure: no server, no words (app/checker/words.CHECKS, keyed by code).

A check belongs to one path: `sequence` (a sequence batcher) or `stateless` (dynamic or no
batcher); `golden` and `finite` are declared on both. It gives one verdict per Scope: the verdict's
variant (`alone`: the lone runs; `all_instances`; `one_instance`: the temporary one-instance
copy) and the measured phases and row variants (app/checker/engine/sequences/measure.py) whose replies it
judges, narrowed to some roles and to some passes of the reference. It is judged by

  reference  each reply against the same session's step alone (the reference; compare.py's tolerance);
  golden     each reply against the golden output of its stream and step (the data file's
             validation_data, app/checker/engine/input_data.py), exact or within the float tolerance;
  finite     each float output: a NaN or an Inf anywhere is a finding, in the lone runs or appearing
             under traffic where the lone runs answered numbers.

When it breaks, its verdict's reason is its diagnosis (words: app/checker/words.DIAGNOSES); a
broken reference may give one of BROKEN_REFERENCE_REASONS instead, and a check broken on a refused
request one of REFUSAL_REASONS. The options' `only`, the
CLI's --only choices, the judge, the JSON report and the JUnit XML read this tuple.
"""
from __future__ import annotations

from dataclasses import dataclass

SEQUENCE, STATELESS, STREAM = "sequence", "stateless", "stream"
REFERENCE, GOLDEN, FINITE = "reference", "golden", "finite"
ALONE, ALL_INSTANCES, ONE_INSTANCE = "alone", "all_instances", "one_instance"
SEQUENCE_TRAFFIC = ("interleaved", "id_reuse", "abandon_round")  # the sequence path's phases after the reference
# A broken reference's reason when its diagnosis does not fit: the float noise is within the
# datatype's rounding but above the user's tolerance, or the lone runs differ only where a reply
# holds NaN or Inf (which equal nothing).
BROKEN_REFERENCE_REASONS = ("noise_above_tolerance", "non_finite")
# Any check, its compared replies right, breaks on a refused request instead: the refusal's cause
# (refusals.refusal_cause) gives one of these (refusals.REFUSAL_DIAGNOSES).
REFUSAL_REASONS = ("sequence_split", "reaped", "requests_refused")


@dataclass(frozen=True)
class Scope:
    variant: str  # the verdict's variant: its id is check/variant
    phases: tuple[str, ...]  # measured phases whose replies it judges
    row_variants: tuple[str, ...]  # the `variant` column of those rows


@dataclass(frozen=True)
class Check:
    code: str
    path: str  # SEQUENCE or STATELESS
    scopes: tuple[Scope, ...]  # one verdict each
    judged_by: str  # REFERENCE, GOLDEN or FINITE
    diagnosis: str  # what its breaking says about the model
    roles: tuple[str, ...] | None = None  # None: every role of its phases
    not_following: str = ""  # a follower of this victim belongs to the other victim's check
    passes: tuple[str, ...] | None = None  # the reference runs: only these passes (None: every one)
    always: bool = False  # runs whatever `only` says (the reference every other check leans on)

    @property
    def variants(self) -> tuple[str, ...]:
        return tuple(s.variant for s in self.scopes)

    @property
    def phases(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for s in self.scopes for p in s.phases))

    @property
    def sequence(self) -> bool:
        return self.path == SEQUENCE

    def scope(self, variant: str) -> Scope:
        return next(s for s in self.scopes if s.variant == variant)


def _alone(phase: str, *row_variants: str) -> Scope:
    return Scope(ALONE, (phase,), row_variants or (ALONE,))


def _each_instance_run(*phases: str) -> tuple[Scope, ...]:
    """A sequence check's two runs: on all instances, and on the one-instance copy."""
    return tuple(Scope(v, phases, (v,)) for v in (ALL_INSTANCES, ONE_INSTANCE))


# Every reply of every phase: the lone runs, then each traffic run on its own.
_EVERY_SEQUENCE_REPLY = (_alone("reference"), *_each_instance_run(*SEQUENCE_TRAFFIC))
_EVERY_STREAM = (_alone("stream_alone"), Scope(ALL_INSTANCES, ("staggered",), (ALL_INSTANCES,)))
_EVERY_STATELESS_REPLY = (_alone("reference"), Scope(ALL_INSTANCES, ("concurrent", "after_traffic"), (ALL_INSTANCES, ALONE)))

CHECKS: tuple[Check, ...] = (
    Check("reference", SEQUENCE, (_alone("reference"),), REFERENCE, "not_reproducible", passes=("b",), always=True),
    Check("interleaved", SEQUENCE, _each_instance_run("interleaved"), REFERENCE, "sessions_mix"),
    # the first wave only frees the slots and IDs the reused ones get
    Check("id_reuse", SEQUENCE, _each_instance_run("id_reuse"), REFERENCE, "inherits_after_end", roles=("reuse", "chain")),
    Check("abandoned", SEQUENCE, _each_instance_run("abandon_round"), REFERENCE, "aborted_pollutes",
          roles=("holder", "victim_abandon", "follower"), not_following="victim_cancel"),
    Check("cancelled", SEQUENCE, _each_instance_run("abandon_round"), REFERENCE, "aborted_pollutes",
          roles=("holder", "victim_cancel", "follower"), not_following="victim_abandon"),
    # A client fault (app/checker/engine/sequences/slow_client.py): a client quiet past the idle timeout, whose
    # sequence the reaper ends, starts over from START under the same ID beside neighbours; all of them
    # must match their lone references, then Triton's queue and the model's state settle.
    Check("slow_client", SEQUENCE, (Scope(ALL_INSTANCES, ("slow_client",), (ALL_INSTANCES,)),), REFERENCE, "slow_client_keeps_state"),
    Check("golden", SEQUENCE, _EVERY_SEQUENCE_REPLY, GOLDEN, "differs_from_golden"),
    Check("finite", SEQUENCE, _EVERY_SEQUENCE_REPLY, FINITE, "non_finite"),
    Check("repeat_alone", STATELESS, (_alone("reference"),), REFERENCE, "keeps_state", passes=("b",), always=True),
    Check("batch_composition", STATELESS, (Scope(ALL_INSTANCES, ("concurrent",), (ALL_INSTANCES,)),), REFERENCE, "batch_dependent"),
    Check("after_traffic", STATELESS, (_alone("after_traffic"),), REFERENCE, "keeps_state"),
    Check("golden", STATELESS, _EVERY_STATELESS_REPLY, GOLDEN, "differs_from_golden"),
    Check("finite", STATELESS, _EVERY_STATELESS_REPLY, FINITE, "non_finite"),
    # A decoupled model's response streams (app/checker/engine/streaming/streams.py): each request alone twice,
    # then staggered so that later requests join running ones, compared response by response.
    Check("stream_reference", STREAM, (_alone("stream_alone"),), REFERENCE, "stream_not_reproducible", passes=("b",), always=True),
    Check("stream_staggered", STREAM, (Scope(ALL_INSTANCES, ("staggered",), (ALL_INSTANCES,)),), REFERENCE, "stream_batch_dependent"),
    # The client faults (app/checker/engine/streaming/faults.py FAULTS): a request cancelled, or its client gone,
    # mid-stream beside neighbours, whose streams must match their lone ones; then the model's state
    # and Triton's queue settle.
    Check("stream_cancelled", STREAM, (Scope(ALL_INSTANCES, ("fault_cancel",), (ALL_INSTANCES,)),), REFERENCE, "fault_leaks_state"),
    Check("stream_disconnected", STREAM, (Scope(ALL_INSTANCES, ("fault_disconnect",), (ALL_INSTANCES,)),), REFERENCE,
          "fault_leaks_state"),
    Check("stream_golden", STREAM, _EVERY_STREAM, GOLDEN, "differs_from_golden"),
    Check("stream_finite", STREAM, _EVERY_STREAM, FINITE, "non_finite"),
)


def path_of(sequence: bool, decoupled: bool = False) -> str:
    """A model's path: STREAM for a decoupled model (whatever its batcher), else by its batcher."""
    return STREAM if decoupled else SEQUENCE if sequence else STATELESS


def for_path(sequence: bool | str) -> tuple[Check, ...]:
    """The checks of one path (a path code, or whether the model has a sequence batcher), in the
    order their verdicts are given."""
    path = sequence if isinstance(sequence, str) else SEQUENCE if sequence else STATELESS
    return tuple(c for c in CHECKS if c.path == path)


def reference(sequence: bool | str) -> Check:
    """The path's lone-runs check, which every check judged by REFERENCE leans on."""
    return next(c for c in for_path(sequence) if c.always)


def get(code: str, sequence: bool | str) -> Check:
    return next(c for c in for_path(sequence) if c.code == code)


def codes(path: str | None = None) -> tuple[str, ...]:
    """Check codes (of one path, or every one), each once, in declaration order: --only's choices."""
    return tuple(dict.fromkeys(c.code for c in CHECKS if path is None or c.path == path))


def always() -> tuple[str, ...]:
    return tuple(c.code for c in CHECKS if c.always)


def variants() -> tuple[str, ...]:
    """Every verdict variant, each once."""
    return tuple(dict.fromkeys(v for c in CHECKS for v in c.variants))


def diagnoses() -> dict[str, str]:
    """check code -> the diagnosis its breaking means."""
    return {c.code: c.diagnosis for c in CHECKS}
