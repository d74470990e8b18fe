#!/usr/bin/env bash
# Scale on Temporal: a 1,000-agent parallel() of 1 s agents on 1, 2 and 4
# worker processes, beside the same run in local mode, on the simulated
# executor. Prints the wall time of each run, and what each call cost beyond
# its agent's second: from the moment it was handed over to the moment its
# answer was recorded (bench/cmd/callstats over `show --json`).
#
#   bash bench/temporal.sh [N=1000] [LATENCY=1s] [WORKERS="1 2 4"]
#
# It builds and starts the Temporal dev server the tests use
# (internal/temporaldev, cached under ~/.cache/dynworkflow-ci; a cold build
# takes minutes). Every run uses --concurrency 256, the most a run allows,
# so that the runs are bound by the agents and the machinery, not the cap:
# 1,000 agents of 1 s take at least 4 s.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

N=${1:-1000}
LATENCY=${2:-1s}
WORKERS=${3:-"1 2 4"}
bench_init
(cd "$REPO" && go build -o "$WORK/callstats" ./bench/cmd/callstats)
temporal_init
write_fanout fanout.workflow.js

run_args=(--args "{\"n\":$N}" --max-agents "$N" --max-items "$N" --concurrency 256 --json)

# one LABEL ARGS...: one timed run; prints its wall time and call costs,
# and the CPU the Temporal server and the workers spent on it.
one() {
	local label=$1
	shift
	local line stats dev0 workers0
	dev0=$(cpu_ms "$DEV_PID")
	workers0=$(cpu_ms "${PIDS[@]}")
	line=$("$MEASURE" -n 1 -label "$label" -stdout "$WORK/out.json" -- "$@")
	line="$line server_cpu_ms=$(($(cpu_ms "$DEV_PID") - dev0)) workers_cpu_ms=$(($(cpu_ms "${PIDS[@]}") - workers0))"
	if [[ $(json_field status "$WORK/out.json") != completed || $(json_field live "$WORK/out.json") != "$N" ]]; then
		echo "temporal.sh: $label did not complete with $N live calls" >&2
		cat "$WORK/out.json" >&2
		exit 1
	fi
	stats=$(dw show "$(json_field runId "$WORK/out.json")" --json | "$WORK/callstats")
	echo "$line $stats"
	result "$label: wall" "$(awk -v ms="$(field wall_median_ms "$line")" 'BEGIN { printf "%.2f", ms / 1000 }')" s -
	result "$label: per-call cost beyond the agent, p50" "$(field overhead_p50_ms "$stats")" ms -
	result "$label: per-call cost beyond the agent, p90" "$(field overhead_p90_ms "$stats")" ms -
	if [[ ${#PIDS[@]} -gt 0 ]]; then
		result "$label: Temporal server CPU per call" "$(awk -v ms="$(field server_cpu_ms "$line")" -v n="$N" 'BEGIN { printf "%.2f", ms / n }')" ms -
		result "$label: worker CPU per call" "$(awk -v ms="$(field workers_cpu_ms "$line")" -v n="$N" 'BEGIN { printf "%.2f", ms / n }')" ms -
	fi
}

one "local, $N agents of $LATENCY" "$DW" --state-dir "$STATE" run fanout.workflow.js --simulate-latency "$LATENCY" "${run_args[@]}"

for w in $WORKERS; do
	queue="bench-$w-$$"
	start_workers "$w" "$queue" --simulate-latency "$LATENCY"
	one "temporal, $w worker(s), $N agents of $LATENCY" "$DW" --state-dir "$STATE" run fanout.workflow.js --backend temporal \
		--temporal-address "$ADDRESS" --temporal-namespace "$NAMESPACE" --task-queue "$queue" "${run_args[@]}"
	stop_workers
done
