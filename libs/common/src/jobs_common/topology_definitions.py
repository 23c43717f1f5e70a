"""Print infra/rabbitmq/definitions.json from the topology module: ``make topology-definitions``."""

from __future__ import annotations

import sys

import orjson

from jobs_common.topology import definitions


def render() -> bytes:
    document = definitions()
    document["users"] = [
        {"name": "guest", "password": "guest", "tags": ["administrator"]},
    ]
    document["permissions"] = [
        {"user": "guest", "vhost": "/", "configure": ".*", "write": ".*", "read": ".*"}
    ]
    return orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


if __name__ == "__main__":
    sys.stdout.buffer.write(render())
