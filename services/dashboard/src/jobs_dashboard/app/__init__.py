"""The dashboard's background work: the platform gauges (its reads are in ``adapters/``)."""
