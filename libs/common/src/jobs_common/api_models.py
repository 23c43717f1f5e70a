"""Base for public API schemas: camelCase JSON, snake_case Python; the public API's own
response headers."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class CamelModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)


# `Idempotent-Replayed: true`: the submission service answered a repeated Idempotency-Key with
# the job it accepted the first time; the gateway passes it on (and exposes it to browsers).
REPLAYED_HEADER = "Idempotent-Replayed"
