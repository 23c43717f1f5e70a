"""The public API fuzzed (``public_api_fuzzing``): part 1 of its operations."""

from __future__ import annotations

import pytest

from .public_api_fuzzing import fuzz_shard

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]


def test_every_operation_of_part_1_answers_as_documented(gateway_url: str) -> None:
    fuzz_shard(gateway_url, 0)
