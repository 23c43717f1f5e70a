"""Which requests may use the console's session cookie (domain/csrf.py)."""

from __future__ import annotations

import pytest

from jobs_gateway.domain.csrf import forgery_refusal

pytestmark = pytest.mark.unit

OWN = "https://jobs.example.com"
DEV = "http://localhost:5173"


@pytest.mark.parametrize(
    ("origin", "fetch_site", "refused"),
    [
        (OWN, "same-origin", False),
        ("HTTPS://Jobs.Example.com/", None, False),  # origins compare without case or slash
        (DEV, "same-site", False),  # a configured origin of the console
        (None, None, False),  # not a browser: the custom header is the guard
        ("https://evil.example", "cross-site", True),
        ("https://evil.example", None, True),
        ("https://sub.jobs.example.com", "same-site", True),  # same site, another origin
        ("null", "cross-site", True),  # sandboxed frame, file: page
        ("http://jobs.example.com", None, True),  # plain http is another origin
        (None, "cross-site", True),
    ],
)
def test_only_the_consoles_own_origins_may_use_the_cookie(
    origin: str | None, fetch_site: str | None, refused: bool
) -> None:
    reason = forgery_refusal(
        origin=origin, fetch_site=fetch_site, own_origin=OWN, trusted_origins=[DEV]
    )
    assert (reason is not None) is refused, reason
