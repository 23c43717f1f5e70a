"""The chaos suite (``make chaos``, tests/chaos): the real stack on private infrastructure,
a mixed load through the gateway, one fault per round, invariants checked after each round.

Modules, one concept each: ``knobs`` (settings from the environment), ``platform`` (private
infrastructure, SMTP sink, supervised stack), ``client`` (the gateway with retried,
idempotent submissions), ``load`` (the round's mixed load), ``faults`` (injecting one fault and
recording its victims), ``facts`` (what PostgreSQL, the broker and the sink say about a
round's jobs), ``invariants`` (pure checks over those facts), ``report`` (the table and the
evidence of a broken invariant), ``rounds`` (one round start to finish, and the run).
"""
