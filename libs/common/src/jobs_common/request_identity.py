"""The caller's identity on a backend: what the gateway forwarded, checked against the
internal token (``jobs_common.auth``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from jobs_common.auth import Identity, identity_from_headers


async def current_identity(request: Request) -> Identity:
    """Reads the identity using the internal token stored on ``app.state.internal_token``."""
    return identity_from_headers(
        dict(request.headers),
        internal_token=request.app.state.internal_token,
        previous=getattr(request.app.state, "previous_internal_tokens", ()),
    )


CurrentIdentity = Annotated[Identity, Depends(current_identity)]
