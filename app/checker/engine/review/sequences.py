"""Rules that read the sequence batcher's own settings: the idle timeout, READY, implicit state,
direct's queue delay, oldest's ordering and iterative sequences.

Each function finds one rule's pitfall (rules.RULES names its code and the configs it is looked
for in): a Hit, an Unchecked naming the figures it lacked, or None.
"""
from __future__ import annotations

from tritonclient.grpc import model_config_pb2 as mc

from app.checker.engine.review.expectations import Expectations
from app.checker.engine.review.facts import (
    IDLE_DEFAULT_US,
    IMPLICIT_STATE_BACKENDS,
    backend_of,
    control_input,
    idle_timeout_us,
    iterative,
    slots_per_instance,
    strategy,
)
from app.checker.engine.review.findings import Found, hit, unchecked

_IDLE_FIELD = "sequence_batching.max_sequence_idle_microseconds"


# An iterative sequence has no client pauses: its one request comes back to Enqueue after each
# execution (IterativeSequencer::RescheduleRequest, sequence_utils.cc:L35-L38 at r24.10), which
# stamps its correlation ID again (sequence_batch_scheduler.cc:L750-L751), and the reaper skips
# a sequence waiting in the backlog (L1095-L1110). Only one step longer than the window could
# be reaped, which neither the default nor a think time says anything about.
def _paused_past(expect: Expectations, idle_us: int) -> bool:
    return expect.think_ms is not None and expect.think_ms * 1000 >= idle_us


def idle_timeout_below_think(config: mc.ModelConfig, expect: Expectations) -> Found:
    if iterative(config):
        return None
    idle_us = idle_timeout_us(config)
    if _paused_past(expect, idle_us):
        return hit(_IDLE_FIELD, idle_ms=idle_us / 1000, think_ms=expect.think_ms)
    if expect.think_ms is None and idle_us != IDLE_DEFAULT_US:  # at the default, idle_timeout_default says enough
        return unchecked(_IDLE_FIELD, "think_ms")
    return None


def idle_timeout_default(config: mc.ModelConfig, expect: Expectations) -> Found:
    # A server-normalised config writes the default out (1000000), a file leaves it 0: the same 1 s.
    # Pauses past it are idle_timeout_below_think's finding instead.
    idle_us = idle_timeout_us(config)
    if iterative(config) or idle_us != IDLE_DEFAULT_US or _paused_past(expect, idle_us):
        return None
    return hit(_IDLE_FIELD, idle_ms=idle_us / 1000)


def direct_without_ready(config: mc.ModelConfig, expect: Expectations) -> Found:
    # Padding rows exist only below the highest ready slot, so one slot never gets one; a model
    # whose only state is implicit is safe too: padding rows run on a dummy state.
    if strategy(config) != "direct" or config.max_batch_size < 2 or config.sequence_batching.state:
        return None
    if control_input(config, mc.ModelSequenceBatching.Control.CONTROL_SEQUENCE_READY) is None:
        return hit("sequence_batching.control_input", slots=config.max_batch_size)
    return None


def implicit_state_unsupported(config: mc.ModelConfig, expect: Expectations) -> Found:
    if not config.sequence_batching.state:
        return None
    backend = backend_of(config, expect)
    if backend is None:
        return unchecked("sequence_batching.state", "backend")
    if backend not in IMPLICIT_STATE_BACKENDS:
        return hit("sequence_batching.state", backend=backend, supported=list(IMPLICIT_STATE_BACKENDS))
    return None


def implicit_state_order(config: mc.ModelConfig, expect: Expectations) -> Found:
    """Triton feeds the k-th output state in name order into the k-th input state in name order
    (SequenceStates::OutputState, server#8586): states whose two names sort differently cross."""
    states = _distinct_states(config)
    by_input = sorted(states, key=lambda s: s.input_name.encode())
    by_output = sorted(states, key=lambda s: s.output_name.encode())  # std::string orders by bytes
    crossed = [{"output": o.output_name, "fed_into": i.input_name, "declared": o.input_name}
               for o, i in zip(by_output, by_input, strict=True) if o.input_name != i.input_name]
    if not crossed:
        return None
    first = crossed[0]
    return hit("sequence_batching.state", states=len(states), crossed=len(crossed), output=first["output"], fed_into=first["fed_into"],
               declared=first["declared"], pairs=crossed)


def _distinct_states(config: mc.ModelConfig) -> list[mc.ModelSequenceBatching.State]:
    """The states Triton keeps: a repeated input or output name is ignored with a warning
    (SequenceStates::Initialize); the first of each is kept here."""
    inputs, outputs, kept = set(), set(), []
    for state in config.sequence_batching.state:
        if state.input_name in inputs or state.output_name in outputs:
            continue
        inputs.add(state.input_name)
        outputs.add(state.output_name)
        kept.append(state)
    return kept


def direct_queue_delay_ignored(config: mc.ModelConfig, expect: Expectations) -> Found:
    if strategy(config) != "direct":
        return None
    direct = config.sequence_batching.direct
    if direct.max_queue_delay_microseconds > 0 and direct.minimum_slot_utilization == 0:
        return hit("sequence_batching.direct.max_queue_delay_microseconds", delay_us=direct.max_queue_delay_microseconds)
    return None


def decoupled_preserve_ordering(config: mc.ModelConfig, expect: Expectations) -> Found:
    if strategy(config) == "oldest" and config.model_transaction_policy.decoupled and config.sequence_batching.oldest.preserve_ordering:
        return hit("sequence_batching.oldest.preserve_ordering")
    return None


# An iterative sequence (one request, rescheduled until the model completes it): whether it
# streams, whether an execution can fill its rows, whether rescheduled requests can rejoin one.

def iterative_not_decoupled(config: mc.ModelConfig, expect: Expectations) -> Found:
    if iterative(config) and not config.model_transaction_policy.decoupled:
        return hit("model_transaction_policy.decoupled")
    return None


def _iterative_oldest_batches(config: mc.ModelConfig) -> bool:
    return iterative(config) and strategy(config) == "oldest" and config.max_batch_size > 1


def iterative_candidates_below_batch(config: mc.ModelConfig, expect: Expectations) -> Found:
    if not _iterative_oldest_batches(config):
        return None
    candidates = slots_per_instance(config)
    if candidates < config.max_batch_size:
        return hit("sequence_batching.oldest.max_candidate_sequences", candidates=candidates, max_batch_size=config.max_batch_size)
    return None


def iterative_zero_queue_delay(config: mc.ModelConfig, expect: Expectations) -> Found:
    if (_iterative_oldest_batches(config) and slots_per_instance(config) > 1
            and config.sequence_batching.oldest.max_queue_delay_microseconds == 0):
        return hit("sequence_batching.oldest.max_queue_delay_microseconds", max_batch_size=config.max_batch_size)
    return None
