#!/usr/bin/env bash
# Run the commands given as arguments at the same time, each with its output in a log of its
# own (var/together-<pid>-<n>.log: a command may run this script again), then print the logs
# in the order given. Exits non-zero when any command failed. `make test` runs the Python
# install followed by lint and the unit tests beside the UI suite this way (the UI needs no
# Python): each is bound to one core for a minute or two and none needs another's result.
set -u
cd "$(dirname "$0")/.."
mkdir -p var
pids=()
n=0
for command in "$@"; do
    bash -c "$command" >"var/together-$$-$n.log" 2>&1 &
    pids+=("$!")
    n=$((n + 1))
done
trap 'kill "${pids[@]}" 2>/dev/null' INT TERM
status=0
n=0
for command in "$@"; do
    wait "${pids[$n]}"
    result=$?
    echo "--- $command (exit $result):"
    cat "var/together-$$-$n.log"
    rm -f "var/together-$$-$n.log"
    [ "$result" -eq 0 ] || status=1
    n=$((n + 1))
done
exit "$status"
