"""Rules that read how the model is served whatever its batcher: batch sizes, sequence capacity,
the response cache and the version policy.

Each function finds one rule's pitfall (rules.RULES names its code and the configs it is looked
for in): a Hit, an Unchecked naming the figures it lacked, or None.
"""
from __future__ import annotations

from tritonclient.grpc import model_config_pb2 as mc

from app.checker.engine.review.expectations import Expectations
from app.checker.engine.review.facts import slots_per_instance, strategy, triton_instance_count
from app.checker.engine.review.findings import Found, hit, unchecked


def preferred_above_max(config: mc.ModelConfig, expect: Expectations) -> Found:
    if config.HasField("dynamic_batching"):
        field, sizes = "dynamic_batching.preferred_batch_size", config.dynamic_batching.preferred_batch_size
    elif strategy(config) == "oldest":
        field, sizes = "sequence_batching.oldest.preferred_batch_size", config.sequence_batching.oldest.preferred_batch_size
    else:
        return None
    above = [size for size in sizes if size > config.max_batch_size]
    if above:
        return hit(field, preferred=max(above), max_batch_size=config.max_batch_size)
    return None


def capacity_below_sessions(config: mc.ModelConfig, expect: Expectations) -> Found:
    field = "max_batch_size" if strategy(config) == "direct" else "sequence_batching.oldest.max_candidate_sequences"
    instances = triton_instance_count(config, expect)
    needs = [name for name, known in (("sessions", expect.sessions is not None), ("gpus", instances is not None)) if not known]
    if needs:
        return unchecked(field, *needs)
    assert instances is not None and expect.sessions is not None  # else `needs` named it
    slots = slots_per_instance(config)
    if instances * slots < expect.sessions:
        return hit(field, instances=instances, slots=slots, capacity=instances * slots, sessions=expect.sessions)
    return None


# max_batch_size 0 and 1 alike give one slot / one request per execution (both schedulers take
# max(1, max_batch_size)).

def direct_one_slot(config: mc.ModelConfig, expect: Expectations) -> Found:
    if config.max_batch_size <= 1 and strategy(config) == "direct":
        return hit("max_batch_size", max_batch_size=config.max_batch_size)
    return None


def dynamic_no_batching(config: mc.ModelConfig, expect: Expectations) -> Found:
    if config.max_batch_size <= 1 and config.HasField("dynamic_batching"):
        return hit("max_batch_size", max_batch_size=config.max_batch_size)
    return None


def response_cache_hides_state(config: mc.ModelConfig, expect: Expectations) -> Found:
    # A sequence or decoupled model with the cache is refused at load (ValidateModelConfig): only
    # the stateless schedulers look requests up in the cache.
    if config.response_cache.enable and not config.model_transaction_policy.decoupled:
        return hit("response_cache.enable")
    return None


def no_rollback_version(config: mc.ModelConfig, expect: Expectations) -> Found:
    # No policy is latest { num_versions: 1 } (NormalizeModelConfig), which is what a server reports.
    policy = config.version_policy
    choice = policy.WhichOneof("policy_choice") or "latest"
    if choice == "latest":
        served = policy.latest.num_versions if policy.HasField("latest") else 1
    elif choice == "specific":
        served = len(set(policy.specific.versions))
    else:
        return None  # all: every version in the repository is served
    if served < 2:
        return hit("version_policy", policy=choice, served=served)
    return None
