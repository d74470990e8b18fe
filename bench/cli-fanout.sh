#!/usr/bin/env bash
# A 1,000-agent parallel() through the CLI on the simulated executor with
# zero latency. Target: under 0.5 s wall and 60 MB peak RSS.
#
#   bash bench/cli-fanout.sh [N=1000] [REPS=5]
#
# Runs `dynworkflow run` REPS times with the default concurrency (what a
# user gets: min(16, CPUs-2)) and once more set with --concurrency 16, and
# prints the median wall time and the largest peak RSS of each.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

N=${1:-1000}
REPS=${2:-5}
bench_init
write_fanout fanout.workflow.js
args=(run fanout.workflow.js --args "{\"n\":$N}" --simulate-latency 0 --max-agents "$N" --max-items "$N" --json)

for conc in default 16; do
	extra=()
	[[ $conc == default ]] || extra=(--concurrency "$conc")
	line=$("$MEASURE" -n "$REPS" -label "fanout-$N-conc-$conc" -stdout "$WORK/out.json" -- \
		"$DW" --state-dir "$STATE" "${args[@]}" "${extra[@]}")
	echo "$line"
	status=$(json_field status "$WORK/out.json")
	live=$(json_field live "$WORK/out.json")
	if [[ $status != completed || $live != "$N" ]]; then
		echo "cli-fanout: the run did not complete with $N live calls (status $status, live $live)" >&2
		cat "$WORK/out.json" >&2
		exit 1
	fi
	result "cli run: $N-agent parallel, wall (conc $conc)" "$(awk -v ms="$(field wall_median_ms "$line")" 'BEGIN { printf "%.3f", ms / 1000 }')" s "<0.5"
	result "cli run: $N-agent parallel, peak RSS (conc $conc)" "$(field rss_max_mb "$line")" MB "<60"
done
