"""What both clients are made of: the base URL, the credentials, the retry budget and the
HTTP client's settings, resolved once from the constructor's arguments and the environment.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from jobs_client.auth import Credentials, TokenStore
from jobs_client.exchange import Send
from jobs_client.models import Tokens
from jobs_client.retries import Retries
from jobs_client.version import __version__

DEFAULT_URL = "http://127.0.0.1:3000"
URL_ENV = "JOBS_URL"
TOKEN_ENV = "JOBS_TOKEN"
USER_AGENT = f"jobs-client/{__version__}"


def resolve_url(url: str | None = None) -> str:
    """The constructor's URL, else ``JOBS_URL``, else http://127.0.0.1:3000."""
    chosen = url or os.environ.get(URL_ENV) or DEFAULT_URL
    parts = urlsplit(chosen)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"not an http(s) URL: {chosen!r}")
    return chosen.rstrip("/")


@dataclass
class ClientCore:
    url: str
    credentials: Credentials
    retries: Retries
    timeout: float
    rng: random.Random

    @classmethod
    def build(
        cls,
        url: str | None,
        *,
        email: str | None,
        password: str | None,
        token: str | None,
        tokens: Tokens | None,
        token_store: TokenStore | None,
        retries: Retries | None,
        timeout: float,
    ) -> ClientCore:
        # JOBS_TOKEN only when the caller gave no way in of their own.
        if token is None and tokens is None and email is None and token_store is None:
            token = os.environ.get(TOKEN_ENV) or None
        credentials = Credentials(
            token=token, tokens=tokens, email=email, password=password, store=token_store
        )
        return cls(
            url=resolve_url(url),
            credentials=credentials,
            retries=retries or Retries(),
            timeout=timeout,
            rng=random.Random(),
        )

    def http_options(self) -> dict[str, Any]:
        return {
            "base_url": self.url,
            "timeout": self.timeout,
            "headers": {"User-Agent": USER_AGENT, "Accept": "application/json"},
        }


def request_options(step: Send) -> dict[str, Any]:
    """The keyword arguments of ``httpx.Client.request`` for a Send step."""
    options: dict[str, Any] = {"params": step.params, "headers": step.headers}
    if step.has_body:
        options["json"] = step.body
    return options
