"""What the config review says: its codes, their severities, a finding (what the report stores),
and what a rule's function returns for the review to make one of (Hit, Unchecked)."""
from __future__ import annotations

import dataclasses as dc
import sys
from enum import Enum
from typing import Any  # a finding's values: what its sentence needs, by key (words render them), as Problem's

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # enum.StrEnum is new in 3.11: the same str-valued enum, printing as its value

    class StrEnum(str, Enum):
        def __str__(self) -> str:
            return str.__str__(self)

        def __format__(self, format_spec: str) -> str:
            return str.__format__(self, format_spec)


class Severity(StrEnum):
    ERROR = "error"  # Triton refuses the config, or answers will be wrong
    WARNING = "warning"  # works, but sessions are lost, waits grow or a plan will not work
    INFO = "info"  # worth knowing; nothing is wrong by itself


class ReviewCode(StrEnum):
    """The codes' names; each is declared by its row in rules.RULES."""

    IDLE_TIMEOUT_DEFAULT = "idle_timeout_default"
    IDLE_TIMEOUT_BELOW_THINK = "idle_timeout_below_think"
    DIRECT_WITHOUT_READY = "direct_without_ready"
    CORRID_TRUNCATED = "corrid_truncated"
    CORRID_SIGN_WRAPS = "corrid_sign_wraps"
    CORRID_STRING_IDS_INTEGER_TYPE = "corrid_string_ids_integer_type"
    CORRID_INTEGER_IDS_STRING_TYPE = "corrid_integer_ids_string_type"
    STRING_ID_TOO_LONG = "string_id_too_long"
    STRING_CORRID_PYTHON = "string_corrid_python"
    IMPLICIT_STATE_UNSUPPORTED = "implicit_state_unsupported"
    IMPLICIT_STATE_ORDER = "implicit_state_order"
    WARMUP_STRING_CORRID = "warmup_string_corrid"
    DIRECT_QUEUE_DELAY_IGNORED = "direct_queue_delay_ignored"
    PREFERRED_ABOVE_MAX = "preferred_above_max"
    CAPACITY_BELOW_SESSIONS = "capacity_below_sessions"
    DIRECT_ONE_SLOT = "direct_one_slot"
    DYNAMIC_NO_BATCHING = "dynamic_no_batching"
    OLDEST_WITHOUT_CORRID = "oldest_without_corrid"
    DECOUPLED_PRESERVE_ORDERING = "decoupled_preserve_ordering"
    ITERATIVE_NOT_DECOUPLED = "iterative_not_decoupled"
    ITERATIVE_CANDIDATES_BELOW_BATCH = "iterative_candidates_below_batch"
    ITERATIVE_ZERO_QUEUE_DELAY = "iterative_zero_queue_delay"
    RESPONSE_CACHE_HIDES_STATE = "response_cache_hides_state"
    NO_ROLLBACK_VERSION = "no_rollback_version"
    NO_CONFIG_FILE = "no_config_file"
    NOT_CHECKED = "not_checked"


@dc.dataclass(frozen=True)
class ReviewFinding:
    code: ReviewCode
    severity: Severity
    field: str  # the config field path it concerns, e.g. sequence_batching.max_sequence_idle_microseconds
    values: dict[str, Any] = dc.field(default_factory=dict, hash=False)  # what its sentence needs

    def to_json(self) -> dict[str, Any]:
        return {"code": str(self.code), "severity": str(self.severity), "field": self.field, "values": dict(self.values)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReviewFinding:
        return cls(ReviewCode(data["code"]), Severity(data["severity"]), data["field"], dict(data.get("values", {})))


# A rule's function names no code: its row gives the code and severity, so a function cannot
# report another rule's pitfall.
@dc.dataclass(frozen=True)
class Hit:
    """The rule's pitfall is in the config."""

    field: str
    values: dict[str, Any] = dc.field(default_factory=dict, hash=False)


@dc.dataclass(frozen=True)
class Unchecked:
    """The rule needs figures (Expectations' names) the user did not give: a NOT_CHECKED finding."""

    field: str
    needs: tuple[str, ...]


Found = Hit | Unchecked | None  # what a rule's function returns for one config: None, nothing to say


def hit(field: str, **values: Any) -> Hit:
    return Hit(field, values)


def unchecked(field: str, *needs: str) -> Unchecked:
    return Unchecked(field, needs)
