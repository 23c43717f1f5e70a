"""Cross-site request forgery rules for the console's session cookie.

The refresh token cookie is ``SameSite=Strict``, so a browser does not send it with a request
another site starts. On top of that, a request that uses the cookie must carry the
``X-Session-Cookie`` header (a cross-site form cannot set a header, and a cross-origin script
that does needs a CORS preflight only the configured origins pass) and must not come from
another origin by what the browser says (``Origin``, ``Sec-Fetch-Site``).
"""

from __future__ import annotations

from collections.abc import Collection


def _normalized(origin: str) -> str:
    return origin.strip().rstrip("/").lower()


def forgery_refusal(
    *,
    origin: str | None,
    fetch_site: str | None,
    own_origin: str,
    trusted_origins: Collection[str],
) -> str | None:
    """Why a cookie request looks forged, or None when it may go on.

    ``origin`` and ``fetch_site`` are the request's ``Origin`` and ``Sec-Fetch-Site`` headers
    (a browser sends both; a client that is not a browser may send neither); ``own_origin`` is
    the gateway's origin as the request addressed it; ``trusted_origins`` the console's other
    origins (``GATEWAY_CORS_ORIGINS``: the Vite dev server)."""
    if fetch_site is not None and fetch_site.strip().lower() == "cross-site":
        return "a cross-site request may not use the session cookie"
    if origin is None:
        return None
    allowed = {_normalized(own_origin), *(_normalized(o) for o in trusted_origins)}
    if _normalized(origin) not in allowed:
        return "this origin may not use the session cookie"
    return None
