"""Login, refresh and registration: the use cases behind /auth (I/O through adapters)."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass

from jobs_common.errors import TooManyRequests, Unauthorized
from jobs_gateway.adapters.passwords import Passwords
from jobs_gateway.adapters.users import UserRepository
from jobs_gateway.domain.rate_limit import TokenBucketLimiter
from jobs_gateway.domain.tokens import TokenIssuer, TokenPair
from jobs_gateway.domain.users import User, normalize_email
from jobs_gateway.metrics import LOGIN_ATTEMPTS

log = logging.getLogger(__name__)

INVALID_CREDENTIALS = "invalid email or password"


@dataclass(frozen=True)
class Session:
    user: User
    tokens: TokenPair


class Accounts:
    def __init__(
        self,
        *,
        users: UserRepository,
        passwords: Passwords,
        tokens: TokenIssuer,
        login_limiter: TokenBucketLimiter,
    ) -> None:
        self.users = users
        self.passwords = passwords
        self.tokens = tokens
        self.login_limiter = login_limiter

    async def login(self, *, email: str, password: str, client_ip: str) -> Session:
        email = normalize_email(email)
        if not self.login_limiter.allow(f"{email}|{client_ip}"):
            LOGIN_ATTEMPTS.labels("rate_limited").inc()
            log.warning("login rate limited", extra={"action": "login_limited", "email": email})
            raise TooManyRequests("too many login attempts, try again later")
        user = await self.users.by_email(email)
        valid = await self.passwords.verify(password, user.password_hash if user else None)
        if user is None or not valid:
            LOGIN_ATTEMPTS.labels("invalid_credentials").inc()
            log.info("login refused", extra={"action": "login_failed", "email": email})
            raise Unauthorized(INVALID_CREDENTIALS)
        LOGIN_ATTEMPTS.labels("success").inc()
        log.info("login", extra={"action": "login", "user_id": str(user.id)})
        return Session(user, self.tokens.pair(user.identity()))

    async def refresh(self, *, refresh_token: str) -> Session:
        claimed = self.tokens.verify_refresh(refresh_token)
        try:
            user_id = uuid.UUID(claimed.user_id)
        except ValueError as exc:
            raise Unauthorized("invalid token") from exc
        # the current record decides: a deleted user or a changed role takes effect here
        user = await self.users.by_id(user_id)
        if user is None:
            raise Unauthorized("invalid token")
        return Session(user, self.tokens.pair(user.identity()))

    async def register(self, *, email: str, password: str) -> User:
        password_hash = await self.passwords.hash(password)
        user = await self.users.create(email=email, password_hash=password_hash, role="user")
        log.info("user registered", extra={"action": "register", "user_id": str(user.id)})
        return user
