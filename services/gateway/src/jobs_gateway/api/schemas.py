"""Public request/response schemas of /auth (camelCase JSON)."""

from __future__ import annotations

from typing import Literal
from uuid import UUID

from pydantic import EmailStr, Field

from jobs_common.api_models import CamelModel
from jobs_common.auth import Role
from jobs_gateway.domain.users import (
    EMAIL_MAX_LENGTH,
    PASSWORD_MAX_LENGTH,
    PASSWORD_MIN_LENGTH,
    User,
)


class LoginRequest(CamelModel):
    email: str = Field(min_length=1, max_length=EMAIL_MAX_LENGTH)
    password: str = Field(min_length=1, max_length=PASSWORD_MAX_LENGTH)


class RefreshRequest(CamelModel):
    """The refresh token to use; required unless the request sends ``X-Session-Cookie: 1``
    (the token is then the session cookie's, and this field must be absent)."""

    refresh_token: str | None = Field(default=None, min_length=1, max_length=4096)


class LogoutRequest(CamelModel):
    """The refresh token of the session to end (its whole family is revoked); required
    unless the request sends ``X-Session-Cookie: 1`` (the session cookie's is ended)."""

    refresh_token: str | None = Field(default=None, min_length=1, max_length=4096)


class UserCreate(CamelModel):
    email: EmailStr = Field(max_length=EMAIL_MAX_LENGTH)
    password: str = Field(min_length=PASSWORD_MIN_LENGTH, max_length=PASSWORD_MAX_LENGTH)


class RegistrationAccepted(CamelModel):
    """The one answer to a well-formed registration, whether the email was new or taken."""

    message: str


class UserPublic(CamelModel):
    id: UUID | str
    email: str
    role: Role

    @classmethod
    def of(cls, user: User) -> UserPublic:
        return cls(id=user.id, email=user.email, role=user.role)


class TokenResponse(CamelModel):
    token: str
    token_type: Literal["bearer"] = "bearer"
    expires_in: int
    # null when the request sent ``X-Session-Cookie: 1``: the token is in the cookie only
    refresh_token: str | None = Field(
        description="the session's next refresh token; null in the session cookie mode "
        "(`X-Session-Cookie: 1`), where only the cookie holds it"
    )
    user: UserPublic
