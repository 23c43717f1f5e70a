"""Entry point: ``python -m jobs_gateway``: the public app on GATEWAY_PORT, its metrics on
GATEWAY_METRICS_PORT (``adapters/metrics_server.py``)."""

from __future__ import annotations

from jobs_common.serve import run_service
from jobs_gateway.adapters.metrics_server import metrics_sidecars
from jobs_gateway.service import create_app
from jobs_gateway.settings import Settings


def main() -> None:
    run_service("gateway", Settings, create_app, metrics_sidecars)


if __name__ == "__main__":
    main()
