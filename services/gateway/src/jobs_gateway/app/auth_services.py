"""The gateway's authentication and abuse-limit services, built from the settings, and their
background loops (the ``/api`` limit's flush, the purge of rows that no longer matter)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.auth import TokenKeys
from jobs_common.periodic import BackgroundLoops
from jobs_gateway.adapters.api_keys import ApiKeyStore
from jobs_gateway.adapters.audit import AuditLog
from jobs_gateway.adapters.passwords import Passwords
from jobs_gateway.adapters.rate_limits import RateLimitCounters
from jobs_gateway.adapters.refresh_tokens import RefreshTokens
from jobs_gateway.adapters.tenancy import TenancyStore
from jobs_gateway.adapters.users import UserRepository
from jobs_gateway.app.accounts import Accounts
from jobs_gateway.app.api_keys import ApiKeys
from jobs_gateway.app.api_rate_limit import ApiRateLimit
from jobs_gateway.app.attempt_limits import AttemptLimits, AttemptLimitsConfig
from jobs_gateway.app.project_scope import ProjectScopes
from jobs_gateway.app.purge_expired import Housekeeping
from jobs_gateway.app.sessions import Sessions
from jobs_gateway.app.tenancy import Tenancy
from jobs_gateway.domain.rate_limit import Limit, Scope, Window
from jobs_gateway.domain.tokens import TokenIssuer
from jobs_gateway.settings import Settings

MINUTE = Window(60)
HOUR = Window(3600)


def attempt_limits(settings: Settings) -> AttemptLimitsConfig:
    return AttemptLimitsConfig(
        login_account=Limit(
            Scope.LOGIN_ACCOUNT, settings.login_attempts_per_account_per_minute, MINUTE
        ),
        login_address=Limit(
            Scope.LOGIN_ADDRESS, settings.login_attempts_per_address_per_minute, MINUTE
        ),
        register_address=Limit(
            Scope.REGISTER_ADDRESS, settings.registrations_per_address_per_hour, HOUR
        ),
    )


def token_issuer(settings: Settings) -> TokenIssuer:
    return TokenIssuer(
        keys=TokenKeys(
            secret=settings.jwt_secret,
            issuer=settings.jwt_issuer,
            audience=settings.jwt_audience,
            previous_secrets=(
                (settings.jwt_previous_secret,) if settings.jwt_previous_secret else ()
            ),
        ),
        access_ttl=timedelta(minutes=settings.access_token_ttl_minutes),
        refresh_ttl=timedelta(days=settings.refresh_token_ttl_days),
    )


@dataclass
class AuthServices:
    settings: Settings
    users: UserRepository
    passwords: Passwords
    sessions: Sessions
    accounts: Accounts
    api_rate_limit: ApiRateLimit
    housekeeping: Housekeeping
    tenancy: Tenancy
    api_keys: ApiKeys
    project_scopes: ProjectScopes
    loops: BackgroundLoops = field(default_factory=BackgroundLoops)

    @classmethod
    def build(cls, settings: Settings, engine: AsyncEngine) -> AuthServices:
        users = UserRepository(engine)
        tenancy_store = TenancyStore(engine)
        tenancy = Tenancy(tenancy_store, users, AuditLog(engine))
        passwords = Passwords(concurrency=settings.password_hash_concurrency)
        counters = RateLimitCounters(engine)
        refresh_tokens = RefreshTokens(engine)
        sessions = Sessions(
            users=users, refresh_tokens=refresh_tokens, tokens=token_issuer(settings)
        )
        return cls(
            settings=settings,
            users=users,
            passwords=passwords,
            sessions=sessions,
            accounts=Accounts(
                users=users,
                passwords=passwords,
                sessions=sessions,
                limits=AttemptLimits(counters=counters, limits=attempt_limits(settings)),
            ),
            api_rate_limit=ApiRateLimit(
                counters=counters, per_minute=settings.api_requests_per_minute
            ),
            housekeeping=Housekeeping(refresh_tokens=refresh_tokens, counters=counters),
            tenancy=tenancy,
            api_keys=ApiKeys(ApiKeyStore(engine), tenancy),
            project_scopes=ProjectScopes(tenancy_store, ttl=settings.project_grants_cache_seconds),
        )

    def start(self) -> None:
        if self.api_rate_limit.enabled:
            self.loops.start(
                self.settings.api_limit_flush_seconds,
                self.api_rate_limit.flush,
                name="api_limit_flush",
            )
        self.loops.start(
            self.settings.purge_interval_seconds, self.housekeeping.purge, name="purge"
        )

    async def stop(self) -> None:
        await self.loops.stop()
