# Sourced by the scripts of `make test-compose`: podman reads the project's own containers.conf.
PODMAN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export CONTAINERS_CONF="$PODMAN_DIR/infra/podman/containers.conf"
