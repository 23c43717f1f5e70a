"""The gateway's use cases: accounts and sessions, the abuse limits, the live-events hub, the
purge of expired rows (docs/gateway.md)."""
