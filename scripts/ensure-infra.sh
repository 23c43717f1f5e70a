#!/usr/bin/env bash
# Start the local dependencies the tests and `make dev` need, when they are not running:
# PostgreSQL and RabbitMQ (with its management plugin). MongoDB is started by the test
# fixtures / dev script (the nx-27017 stand-in) unless MONGO_URL points at a real server.
set -euo pipefail

if [ -n "${POSTGRES_URL:-}" ]; then
  echo "PostgreSQL: using POSTGRES_URL"
elif pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  echo "PostgreSQL: running on 127.0.0.1:5432"
elif command -v pg_ctlcluster >/dev/null; then
  echo "PostgreSQL: starting local cluster"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
  for _ in $(seq 1 60); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 0.5; done
else
  echo "PostgreSQL: not running and cannot be started here; set POSTGRES_URL" >&2
  exit 1
fi

if [ -n "${AMQP_URL:-}" ]; then
  echo "RabbitMQ: using AMQP_URL"
else
  if ! rabbitmqctl -q status >/dev/null 2>&1; then
    echo "RabbitMQ: starting"
    rabbitmq-server -detached
    rabbitmqctl -q wait --timeout 60 "$(rabbitmqctl eval 'node().' 2>/dev/null || echo rabbit@localhost)" >/dev/null 2>&1 || true
    for _ in $(seq 1 60); do rabbitmqctl -q status >/dev/null 2>&1 && break; sleep 1; done
  fi
  if ! rabbitmq-plugins list -e -m 2>/dev/null | grep -qx rabbitmq_management; then
    echo "RabbitMQ: enabling the management plugin"
    rabbitmq-plugins enable rabbitmq_management >/dev/null
  fi
  for _ in $(seq 1 60); do
    curl -fsS -u guest:guest http://127.0.0.1:15672/api/overview >/dev/null 2>&1 && break
    sleep 1
  done
  curl -fsS -u guest:guest http://127.0.0.1:15672/api/overview >/dev/null \
    && echo "RabbitMQ: running, management API on :15672"
fi

# The browser tests drive Debian's Chromium through Playwright (never a downloaded browser).
if command -v chromium >/dev/null; then
  echo "Chromium: $(chromium --version 2>/dev/null | head -n1)"
elif command -v apt-get >/dev/null; then
  echo "Chromium: installing Debian's package"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q chromium >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
  chromium --version
else
  echo "Chromium: not installed and no apt-get; the browser tests need /usr/bin/chromium" >&2
  exit 1
fi

# tests/deploy checks docker-compose.yml with `docker-compose config` (Debian's docker-compose;
# it reads the file and needs no Docker engine, none runs here).
if command -v docker-compose >/dev/null; then
  echo "docker-compose: $(docker-compose version --short 2>/dev/null || echo installed)"
elif command -v apt-get >/dev/null; then
  echo "docker-compose: installing Debian's package"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q docker-compose >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null && apt-get install -y -q docker-compose >/dev/null; }
  docker-compose version --short
else
  echo "docker-compose: not installed and no apt-get; tests/deploy needs /usr/bin/docker-compose" >&2
  exit 1
fi

# tests/deploy checks infra/prometheus with promtool (Debian's prometheus package; no server is
# needed). Installing the package may start a system Prometheus on :9090 (and, as a recommended
# package, a node exporter on :9100, the worker's port): without recommends, and stopped and
# disabled if the package's scripts started it (in containers policy-rc.d usually prevents it).
if command -v promtool >/dev/null; then
  echo "promtool: $(promtool --version 2>/dev/null | head -n1)"
elif command -v apt-get >/dev/null; then
  echo "promtool: installing Debian's prometheus package"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends prometheus >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends prometheus >/dev/null; }
  for unit in prometheus prometheus-node-exporter; do
    if [ -e "/etc/init.d/$unit" ]; then
      service "$unit" stop >/dev/null 2>&1 || true
      if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
        systemctl disable --now "$unit" >/dev/null 2>&1 || true
      else
        update-rc.d "$unit" disable >/dev/null 2>&1 || true
      fi
    fi
  done
  promtool --version | head -n1
else
  echo "promtool: not installed and no apt-get; tests/deploy needs /usr/bin/promtool" >&2
  exit 1
fi

# tests/compose/test_compose_translation.py (part of `make test-unit`) has podman-compose
# translate docker-compose.yml (dry run, nothing started); `make test-compose` runs it for real.
bash "$(dirname "${BASH_SOURCE[0]}")/podman/ensure-podman.sh"
