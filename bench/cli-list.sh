#!/usr/bin/env bash
# `dynworkflow list` over 50 runs of 200 calls each. Target: under 30 ms
# (the Node peer takes 260 ms).
#
#   bash bench/cli-list.sh [RUNS=50] [CALLS=200] [REPS=5]
#
# Creates the runs through the CLI (`dynworkflow run`, simulated executor,
# zero latency), then times `list` and `list --json`, REPS times each.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUNS=${1:-50}
CALLS=${2:-200}
REPS=${3:-5}
bench_init
write_fanout fanout.workflow.js

echo "creating $RUNS runs of $CALLS calls..." >&2
for ((i = 0; i < RUNS; i++)); do
	dw run fanout.workflow.js --args "{\"n\":$CALLS}" --simulate-latency 0 --concurrency 16 --json >"$WORK/out.json"
	[[ $(json_field status "$WORK/out.json") == completed ]] || {
		echo "cli-list: run $i did not complete" >&2
		cat "$WORK/out.json" >&2
		exit 1
	}
done
listed=$(dw list --json | grep -c '"runId"' || true)
if [[ $listed != "$RUNS" ]]; then
	echo "cli-list: list --json shows $listed runs, want $RUNS" >&2
	exit 1
fi
echo "state: $(du -sh "$STATE" | cut -f1) in $(find "$STATE" -type f | wc -l) files" >&2

# The floor every command pays: starting the process and its package
# initialization, before any work.
line=$("$MEASURE" -n "$REPS" -label "startup" -- "$DW" --help)
echo "$line"
result "cli startup floor (dynworkflow --help), wall" "$(field wall_median_ms "$line")" ms -

for mode in text json; do
	extra=()
	[[ $mode == text ]] || extra=(--json)
	line=$("$MEASURE" -n "$REPS" -label "list-$mode" -- "$DW" --state-dir "$STATE" list "${extra[@]}")
	echo "$line"
	flag=""
	[[ $mode == text ]] || flag=" --json"
	result "list$flag: $RUNS runs x $CALLS calls, wall" "$(field wall_median_ms "$line")" ms "<30"
done
