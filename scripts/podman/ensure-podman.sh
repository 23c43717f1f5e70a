#!/usr/bin/env bash
# Installs what `make test-compose` runs containers with, from Debian's packages, when it is
# missing: podman, podman-compose and debootstrap (for the local base image). No Docker engine
# and no image registry are needed.
set -euo pipefail

missing=()
for command in podman podman-compose debootstrap; do
  command -v "$command" >/dev/null || missing+=("$command")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    echo "podman: ${missing[*]} missing and no apt-get to install them" >&2
    exit 1
  fi
  echo "podman: installing Debian's ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null && apt-get install -y -q "${missing[@]}" >/dev/null; }
fi
echo "podman: $(podman --version), podman-compose $(podman-compose --version 2>/dev/null | sed -n "s/^podman-compos[a-z]* version *//p" | head -n1)"
