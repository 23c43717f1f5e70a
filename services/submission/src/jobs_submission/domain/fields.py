"""Field types of the scheduling options: ``runAt``, ``retryPolicy``, ``dependsOn`` entries.

Pure parsing; bounds that need the clock (``runAt`` at most a year ahead) are checked by the
caller, which knows "now".
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Annotated, Any, Literal, Self

from pydantic import (
    ConfigDict,
    Discriminator,
    Field,
    PlainValidator,
    StringConstraints,
    Tag,
    WithJsonSchema,
    model_validator,
)

from jobs_common.api_models import CamelModel
from jobs_common.contracts import RetryPolicySpec
from jobs_common.errors import ErrorDetail
from jobs_common.retry_policy_commands import POLICY_NAME_PATTERN

MAX_DELAY_SECONDS = 31_536_000  # 365 days; also the furthest runAt ahead of now
MAX_DEPENDENCIES = 100
MAX_RETRY_DELAY_MS = 86_400_000  # RetryPolicySpec's bound
REF_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$"
REF_PREFIX = "ref:"

_REF = re.compile(REF_PATTERN)


def parse_run_at(value: object) -> datetime:
    """An ISO 8601 date-time string that carries a UTC offset (``Z`` or ``+hh:mm``)."""
    if not isinstance(value, str):
        raise ValueError("must be an ISO 8601 date-time string with a UTC offset")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError("not an ISO 8601 date-time") from None
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("needs a UTC offset, e.g. 2030-01-01T09:00:00Z or +02:00")
    return moment


RunAt = Annotated[
    datetime,
    PlainValidator(parse_run_at),
    WithJsonSchema(
        {
            "type": "string",
            "format": "date-time",
            "description": "ISO 8601 with a UTC offset; past means now; at most 1 year ahead.",
        }
    ),
]


class RetryPolicyIn(CamelModel):
    """An inline retry policy; omitted fields take the job type's defaults (scheduler side).

    The bounds are those of :class:`jobs_common.contracts.RetryPolicySpec`, with strict types.
    """

    model_config = ConfigDict(extra="forbid")

    strategy: Literal["fixed", "linear", "exponential"] | None = None
    base_delay_ms: int | None = Field(default=None, strict=True, ge=0, le=MAX_RETRY_DELAY_MS)
    multiplier: float | None = Field(default=None, strict=True, ge=1, le=100)
    max_delay_ms: int | None = Field(default=None, strict=True, ge=0, le=MAX_RETRY_DELAY_MS)
    jitter: bool | None = Field(default=None, strict=True)

    @model_validator(mode="after")
    def _max_not_below_base(self) -> Self:
        if (
            self.base_delay_ms is not None
            and self.max_delay_ms is not None
            and self.max_delay_ms < self.base_delay_ms
        ):
            raise ValueError("maxDelayMs must be >= baseDelayMs")
        return self

    def to_spec(self) -> RetryPolicySpec:
        return RetryPolicySpec.model_validate(self.model_dump())


PolicyName = Annotated[
    str,
    StringConstraints(pattern=POLICY_NAME_PATTERN),
    Field(description="The name of a stored retry policy (GET /api/retry-policies)."),
]


def _policy_tag(value: Any) -> str | None:
    if isinstance(value, dict | RetryPolicyIn):
        return "object"
    if isinstance(value, str):
        return "name"
    return None


RetryPolicyField = Annotated[
    Annotated[RetryPolicyIn, Tag("object")] | Annotated[PolicyName, Tag("name")],
    Discriminator(
        _policy_tag,
        custom_error_type="retry_policy_type",
        custom_error_message="must be a retry policy object or the name of a stored policy",
    ),
]
POLICY_TAGS = frozenset({"object", "name"})


def is_ref_label(label: str) -> bool:
    return _REF.match(label) is not None


def parse_dependency(value: object) -> str:
    """A batch ``dependsOn`` entry: a job id (canonical uuid) or ``ref:<label>``."""
    if not isinstance(value, str):
        raise ValueError("must be a job id or ref:<label>")
    if value.startswith(REF_PREFIX):
        label = value[len(REF_PREFIX) :]
        if not is_ref_label(label):
            raise ValueError("ref:<label> needs a label of letters, digits and _.:-")
        return value
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise ValueError("must be a job id (uuid) or ref:<label>") from None


Dependency = Annotated[
    str,
    PlainValidator(parse_dependency),
    WithJsonSchema({"type": "string", "description": "A job id, or ref:<label> in a batch."}),
]


def _path(prefix: str, loc: Iterable[Any]) -> str:
    parts = [str(part) for part in loc]
    # a retryPolicy error carries its union tag ("object" / "name"): not a field of the body
    if len(parts) > 1 and parts[0] == "retryPolicy" and parts[1] in POLICY_TAGS:
        del parts[1]
    return ".".join(part for part in (prefix, *parts) if part != "")


def field_details(errors: Iterable[Mapping[str, Any]], prefix: str = "") -> list[ErrorDetail]:
    details = []
    for error in errors:
        path = _path(prefix, error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        details.append(ErrorDetail(field=path or "body", message=message))
    return details
