"""The JSON response every service answers with (orjson)."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi.responses import Response


class JsonResponse(Response):
    """A JSON response serialized with orjson (FastAPI's ORJSONResponse is deprecated)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)
