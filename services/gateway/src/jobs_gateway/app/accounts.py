"""Login and registration: the use cases behind /auth/login and /auth/register (I/O through
adapters; app/sessions.py issues and rotates the tokens)."""

from __future__ import annotations

import logging

from jobs_common.errors import TooManyRequests, Unauthorized
from jobs_gateway.adapters.metrics import LOGIN_ATTEMPTS
from jobs_gateway.adapters.passwords import Passwords
from jobs_gateway.adapters.users import UserRepository
from jobs_gateway.app.attempt_limits import AttemptLimits
from jobs_gateway.app.sessions import Session, Sessions
from jobs_gateway.domain.tokens import TokenIssuer
from jobs_gateway.domain.users import normalize_email

log = logging.getLogger(__name__)

INVALID_CREDENTIALS = "invalid email or password"


class Accounts:
    def __init__(
        self,
        *,
        users: UserRepository,
        passwords: Passwords,
        sessions: Sessions,
        limits: AttemptLimits,
    ) -> None:
        self.users = users
        self.passwords = passwords
        self.sessions = sessions
        self.limits = limits

    @property
    def tokens(self) -> TokenIssuer:
        """The token issuer of the sessions (the live-events socket verifies with it)."""
        return self.sessions.tokens

    async def login(self, *, email: str, password: str, client_ip: str) -> Session:
        """A new session; 401 alike for an unknown email and a wrong password, 429 past the
        account's or the address's limit (counted before any password work)."""
        email = normalize_email(email)
        try:
            await self.limits.login(email=email, address=client_ip)
        except TooManyRequests:
            LOGIN_ATTEMPTS.labels("rate_limited").inc()
            raise
        user = await self.users.by_email(email)
        valid = await self.passwords.verify(password, user.password_hash if user else None)
        if user is None or not valid:
            LOGIN_ATTEMPTS.labels("invalid_credentials").inc()
            log.info("login refused", extra={"action": "login_failed", "email": email})
            raise Unauthorized(INVALID_CREDENTIALS)
        LOGIN_ATTEMPTS.labels("success").inc()
        log.info("login", extra={"action": "login", "user_id": str(user.id)})
        return await self.sessions.start(user)

    async def register(self, *, email: str, password: str, client_ip: str) -> None:
        """Create a user unless the email is taken. The caller learns nothing either way:
        the password is hashed and the insert tried in both cases, and the answer is the
        same; 429 past the address's limit."""
        await self.limits.register(address=client_ip)
        password_hash = await self.passwords.hash(password)
        user = await self.users.insert_if_absent(
            email=email, password_hash=password_hash, role="user"
        )
        if user is None:
            log.info("registration of a taken email", extra={"action": "register_taken"})
        else:
            log.info("user registered", extra={"action": "register", "user_id": str(user.id)})
