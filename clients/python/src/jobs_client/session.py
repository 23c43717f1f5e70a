"""The CLI's session file: ``$XDG_CONFIG_HOME/jobs/session.json`` (``~/.config/jobs/...``
when the variable is unset or not an absolute path).

It holds the gateway's URL, who is logged in, and the token pair (never the password). The
refresh token is a credential for 7 days, so the file is private from its first byte: the
directory is created 0700, each version of the file is written to a new file opened with
mode 0600 (``O_CREAT | O_EXCL``, so no other mode ever exists on disk, whatever the umask),
flushed, then renamed over the old one (a crash leaves the old session or the new one, never
half of one). It is also a :class:`~jobs_client.auth.TokenStore`: a client built with it saves
every refreshed pair, and two processes sharing it take each other's refreshes.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jobs_client.models import Tokens

FILE_MODE = 0o600
DIR_MODE = 0o700


def config_dir() -> Path:
    """The user's configuration directory for this tool."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".config"
    return root / "jobs"


@dataclass(frozen=True)
class Session:
    url: str
    tokens: Tokens


class SessionFile:
    """Read and write one session file (by default :func:`config_dir` / ``session.json``).

    As a token store, ``save`` writes under ``url`` when given (a login to that gateway),
    else under the URL the file already names."""

    def __init__(self, path: Path | None = None, *, url: str | None = None) -> None:
        self.path = path or config_dir() / "session.json"
        self.url = url

    def read(self) -> Session | None:
        """The stored session; None when there is none or it cannot be read."""
        try:
            body: Any = json.loads(self.path.read_text(encoding="utf-8"))
            tokens = Tokens(
                access_token=str(body["token"]),
                refresh_token=body.get("refreshToken"),
                expires_at=body.get("expiresAt"),
                email=body.get("email"),
                role=body.get("role"),
            )
            return Session(url=str(body["url"]), tokens=tokens)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def write(self, session: Session) -> None:
        tokens = session.tokens
        body = {
            "url": session.url,
            "email": tokens.email,
            "role": tokens.role,
            "token": tokens.access_token,
            "refreshToken": tokens.refresh_token,
            "expiresAt": tokens.expires_at,
        }
        self._write_private(json.dumps(body, indent=2).encode() + b"\n")

    def _write_private(self, data: bytes) -> None:
        directory = self.path.parent
        directory.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        temporary = directory / f".{self.path.name}.{secrets.token_hex(6)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(temporary, flags, FILE_MODE)
        try:
            os.fchmod(fd, FILE_MODE)  # exactly 0600, even under an unusual umask
            with os.fdopen(fd, "wb") as handle:
                fd = -1
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            if fd >= 0:
                os.close(fd)
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise

    def delete(self) -> bool:
        """Remove the session; False when there was none."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        return True

    # --- TokenStore ---------------------------------------------------------------------

    def load(self) -> Tokens | None:
        session = self.read()
        return session.tokens if session else None

    def save(self, tokens: Tokens) -> None:
        url = self.url
        if url is None:
            session = self.read()
            if session is None:
                raise RuntimeError("no session to update and no URL to store one under")
            url = session.url
        self.write(Session(url=url, tokens=tokens))
