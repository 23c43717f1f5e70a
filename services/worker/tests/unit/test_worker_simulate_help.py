"""The simulate type's help text, as the console's submit form shows it (the model's docstring
and field descriptions), tells the defaults its fields are filled with (issue 35: it once said
0.2 / 0.5 while the fields held 0 / 0)."""

from __future__ import annotations

import pytest

from jobs_worker.handlers.payloads import SimulatePayload

pytestmark = pytest.mark.unit


def test_the_simulate_help_text_tells_the_defaults_its_fields_hold() -> None:
    schema = SimulatePayload.model_json_schema(by_alias=True)
    fields = schema["properties"]
    rates = {fields["immediateFailureRate"]["default"], fields["failureRate"]["default"]}
    assert rates == {0}
    described = " ".join(schema["description"].split())
    assert "both failure rates default to 0" in described
    low, high = fields["minSeconds"]["default"], fields["maxSeconds"]["default"]
    assert f"runs {low:g}-{high:g} s" in described
    assert SimulatePayload() == SimulatePayload.model_validate(
        {name: field["default"] for name, field in fields.items()}
    )
