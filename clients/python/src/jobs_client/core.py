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
API_KEY_ENV = "JOBS_API_KEY"
PROJECT_ENV = "JOBS_PROJECT"
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
    project: str | None = None

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
        api_key: str | None = None,
        project: str | None = None,
    ) -> ClientCore:
        others = (token, tokens, email, token_store)
        if api_key is not None:
            if any(way is not None for way in others):
                raise ValueError("an api_key is a way in of its own: give no token or login too")
            token = api_key  # a fixed bearer credential: the gateway tells a key from a token
        elif all(way is None for way in others):
            # JOBS_TOKEN, else JOBS_API_KEY, only when the caller gave no way in of their own.
            token = os.environ.get(TOKEN_ENV) or os.environ.get(API_KEY_ENV) or None
        credentials = Credentials(
            token=token, tokens=tokens, email=email, password=password, store=token_store
        )
        return cls(
            url=resolve_url(url),
            credentials=credentials,
            retries=retries or Retries(),
            timeout=timeout,
            rng=random.Random(),
            project=project or os.environ.get(PROJECT_ENV) or None,
        )

    def http_options(self) -> dict[str, Any]:
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if self.project is not None:  # every request acts in and reads this project
            headers["X-Project"] = self.project
        return {"base_url": self.url, "timeout": self.timeout, "headers": headers}


def request_options(step: Send) -> dict[str, Any]:
    """The keyword arguments of ``httpx.Client.request`` for a Send step."""
    options: dict[str, Any] = {"params": step.params, "headers": step.headers}
    if step.has_body:
        options["json"] = step.body
    return options
