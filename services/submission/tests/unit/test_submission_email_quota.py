"""The email quota's windows and the recipient allow-list (pure)."""

from __future__ import annotations

import pytest

from jobs_common.auth import Identity
from jobs_common.recipients import RecipientAllowList
from jobs_submission.domain.quota import EmailPolicy, EmailQuota, refused_recipients
from jobs_submission.domain.requests import JobRequest

pytestmark = pytest.mark.unit

USER = Identity(user_id="u", email="User@Test.com", role="user")
ADMIN = Identity(user_id="a", email="admin@test.com", role="admin")


def job(job_type: str = "email", to: str = "a@example.com") -> JobRequest:
    return JobRequest(
        job_type=job_type,
        priority=1,
        submitted_by="user@test.com",
        payload={"to": to, "subject": "s", "body": "b"} if job_type == "email" else {},
        max_attempts=None,
        timeout_seconds=None,
    )


def test_windows_are_aligned_and_keyed_by_caller() -> None:
    quota = EmailQuota(limit=10, window_seconds=3600)
    window = quota.window(USER, amount=2, now_ms=7_200_000 + 1_500)
    assert window.key == "email:user@test.com:7200000"
    assert (window.start_ms, window.end_ms) == (7_200_000, 10_800_000)
    assert window.retry_after_seconds() == 3599  # 3598.5 s left, rounded up
    assert not window.exceeded(10) and window.exceeded(11)
    last_moment = quota.window(USER, amount=1, now_ms=10_799_999)
    assert last_moment.retry_after_seconds() == 1
    refusal = window.refusal()
    assert refusal.status_code == 429
    assert refusal.headers() == {"Retry-After": "3599"}


def test_only_email_jobs_count_and_exempt_admins_do_not() -> None:
    policy = EmailPolicy(quota=EmailQuota(limit=5, window_seconds=60))
    assert policy.window(USER, [job("simulate")], now_ms=0) is None
    window = policy.window(USER, [job(), job("simulate"), job()], now_ms=0)
    assert window is not None and window.amount == 2
    assert policy.window(ADMIN, [job()], now_ms=0) is None
    counted = EmailPolicy(quota=EmailQuota(limit=5, window_seconds=60, exempt_admins=False))
    assert counted.window(ADMIN, [job()], now_ms=0) is not None
    assert (
        EmailPolicy(quota=EmailQuota(limit=0, window_seconds=60)).window(USER, [job()], now_ms=0)
        is None
    )


def test_allow_list_entries_are_addresses_or_domains() -> None:
    allowed = RecipientAllowList.of(["Ops@Example.com", "example.org", "@corp.net", " "])
    assert allowed.allows("ops@example.com")
    assert not allowed.allows("dev@example.com")
    assert allowed.allows("anyone@EXAMPLE.org")
    assert not allowed.allows("anyone@mail.example.org")  # no subdomains
    assert allowed.allows("x@corp.net")
    assert RecipientAllowList.of([]).allows("whoever@anywhere.test")


def test_refused_recipients_name_their_field() -> None:
    allowed = RecipientAllowList.of(["example.org"])
    details = refused_recipients(
        [
            ("jobs.0.", job(to="a@example.org")),
            ("jobs.1.", job(to="b@x.net")),
            ("jobs.2.", job("simulate")),
        ],
        allowed,
    )
    assert [d.field for d in details] == ["jobs.1.payload.to"]
    assert refused_recipients([("", job(to="b@x.net"))], RecipientAllowList.of([])) == []
