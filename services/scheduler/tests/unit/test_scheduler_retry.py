import random

import pytest

from jobs_scheduler.domain.retry import RetryPolicy, retry_delay_ms

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ("fixed", [1000, 1000, 1000, 1000]),
        ("linear", [1000, 2000, 3000, 4000]),
        ("exponential", [1000, 2000, 4000, 8000]),
    ],
)
def test_delays_without_jitter(strategy: str, expected: list[int]) -> None:
    policy = RetryPolicy(strategy=strategy, base_delay_ms=1000, multiplier=2, jitter=False)  # type: ignore[arg-type]
    assert [retry_delay_ms(policy, attempt) for attempt in range(1, 5)] == expected


def test_delay_is_capped() -> None:
    policy = RetryPolicy(base_delay_ms=1000, multiplier=10, max_delay_ms=5000, jitter=False)
    assert retry_delay_ms(policy, 5) == 5000


def test_jitter_stays_within_half_to_one_and_a_half() -> None:
    policy = RetryPolicy(strategy="fixed", base_delay_ms=1000, jitter=True)
    rng = random.Random(7)
    delays = [retry_delay_ms(policy, 1, rng) for _ in range(2000)]
    assert min(delays) >= 500
    assert max(delays) <= 1500
    assert max(delays) - min(delays) > 800  # really spread, not constant


def test_attempt_is_one_based() -> None:
    with pytest.raises(ValueError):
        retry_delay_ms(RetryPolicy(), 0)
