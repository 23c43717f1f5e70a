"""How the entries of one relay pass are packed into JobsSubmitted messages."""

import pytest

from jobs_submission.domain.outbox import pack

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("sizes", "max_items", "max_bytes", "groups"),
    [
        ([], 3, 100, []),
        ([10], 3, 100, [[0]]),
        ([10] * 7, 3, 1000, [[0, 1, 2], [3, 4, 5], [6]]),
        ([40, 40, 40, 40], 10, 100, [[0, 1], [2, 3]]),  # 120 bytes would be too many
        ([10, 500, 10], 10, 100, [[0], [1], [2]]),  # too big for any message: alone
        ([60, 40, 1], 10, 100, [[0, 1], [2]]),  # exactly max_bytes fits
    ],
)
def test_groups_hold_at_most_max_items_and_max_bytes(
    sizes: list[int], max_items: int, max_bytes: int, groups: list[list[int]]
) -> None:
    assert [list(g) for g in pack(sizes, max_items=max_items, max_bytes=max_bytes)] == groups
