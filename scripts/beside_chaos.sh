#!/usr/bin/env bash
# Run the short chaos pass (tests/chaos, on infrastructure of its own) in the background while
# the commands given as arguments run one after another (stopping at the first that fails);
# then wait for the pass and print its output. Exits non-zero when anything failed.
# `make test` runs the UI suite and the end-to-end files beside it; most of the pass is
# waiting for faults and recoveries, so the machine's other core does the rest meanwhile.
set -u
cd "$(dirname "$0")/.."
mkdir -p var
log=var/chaos-pass.log
.venv/bin/pytest -m e2e -q tests/chaos >"$log" 2>&1 &
chaos=$!
trap 'kill "$chaos" 2>/dev/null' INT TERM
status=0
for command in "$@"; do
    bash -c "$command" || { status=$?; break; }
done
wait "$chaos"
pass=$?
echo "--- the chaos pass ($log):"
cat "$log"
[ "$status" -eq 0 ] && [ "$pass" -eq 0 ]
