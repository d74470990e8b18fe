#!/usr/bin/env bash
# Runs of any size on Temporal: N agents answering SIZE bytes each, on 2
# worker processes, paused half way and resumed. Prints, for each phase and
# for the whole run, the wall time and the Temporal server's CPU per call,
# and the run's histories: how many executions (a resume, and each
# continue-as-new of a history grown long), their events and bytes, the
# largest one, and the blob store that holds what a history cannot.
#
#   bash bench/temporal-size.sh [N=1000] [SIZE=102400] [LATENCY=1s]
#
# The figure that matters is per call: it must stay flat as N grows
# (bash bench/temporal-size.sh 1000; bash bench/temporal-size.sh 3000; the
# issue's target is 10000). Agents are the simulated executor taking
# LATENCY (so that there is time to pause half way), with
# [simulate:size=SIZE] (over 8 KB, so that each is a file of the blob
# store, which is how the script sees half of them answered); the script
# keeps only each answer's length, so
# what grows with N is the machinery's, not the script's.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

N=${1:-1000}
SIZE=${2:-102400}
LATENCY=${3:-1s}
bench_init
(cd "$REPO" && go build -o "$WORK/temporalhist" ./bench/cmd/temporalhist)
temporal_init
cat >size.workflow.js <<'JS'
export const meta = { name: 'bench-size', description: 'args.n agents answering args.size bytes each' }
const sizes = await parallel(Array.from({ length: args.n }, (_, i) => async () => (await agent(`task ${i} [simulate:size=${args.size}]`)).length))
const total = sizes.reduce((n, s) => n + s, 0)
if (total !== args.n * args.size) throw new Error(`the answers hold ${total} bytes, not ${args.n * args.size}`)
return total
JS

queue="size-$$"
start_workers 2 "$queue" --simulate-latency "$LATENCY"
temporal=(--backend temporal --temporal-address "$ADDRESS" --temporal-namespace "$NAMESPACE" --task-queue "$queue")
now_ms() { date +%s%3N; }

# Phase 1: start, and pause once half the calls have answered.
dev0=$(cpu_ms "$DEV_PID")
workers0=$(cpu_ms "${PIDS[@]}")
t0=$(now_ms)
"$DW" --state-dir "$STATE" run size.workflow.js "${temporal[@]}" --args "{\"n\":$N,\"size\":$SIZE}" \
	--max-agents "$N" --max-items "$N" --concurrency 256 --json >"$WORK/first.json" 2>"$WORK/first.err" &
RUN=$!
id=""
for _ in $(seq 600); do
	id=$(sed -n 's/^\([^ ]*\) started on Temporal.*/\1/p' "$WORK/first.err")
	[[ -n $id ]] && break
	sleep 0.1
done
[[ -n $id ]] || { echo "temporal-size.sh: the run did not start" >&2; cat "$WORK/first.err" >&2; exit 1; }
# Each answer over 8 KB is a file of the blob store: counting them is
# cheaper than asking Temporal.
while :; do
	answers=$(find "$STATE/blobs" -type f 2>/dev/null | wc -l)
	[[ $answers -ge $((N / 2)) ]] && break
	kill -0 "$RUN" 2>/dev/null || break
	sleep 0.1
done
dw pause "$id" >/dev/null || { echo "temporal-size.sh: the run ended before half its calls were seen to answer: give it longer agents (LATENCY)" >&2; exit 1; }
wait "$RUN" || true # exit 2: paused
t1=$(now_ms)
dev1=$(cpu_ms "$DEV_PID")
workers1=$(cpu_ms "${PIDS[@]}")
[[ $(json_field status "$WORK/first.json") == paused ]] || { echo "temporal-size.sh: the run did not pause" >&2; cat "$WORK/first.json" "$WORK/first.err" >&2; exit 1; }
first_live=$(json_field live "$WORK/first.json")

# Phase 2: resume to the end.
dw resume "$id" --json >"$WORK/second.json" 2>"$WORK/second.err" || true
t2=$(now_ms)
dev2=$(cpu_ms "$DEV_PID")
workers2=$(cpu_ms "${PIDS[@]}")
if [[ $(json_field status "$WORK/second.json") != completed ]]; then
	echo "temporal-size.sh: the resumed run did not complete" >&2
	cat "$WORK/second.json" "$WORK/second.err" >&2
	exit 1
fi
replayed=$(json_field replayed "$WORK/second.json")
second_live=$(json_field live "$WORK/second.json")
hist=$(TEMPORALHIST_FAILURES=${TEMPORALHIST_FAILURES:-} "$WORK/temporalhist" -address "$ADDRESS" -namespace "$NAMESPACE" -run "$id" -blobs "$STATE/blobs")
summary=$(head -n 1 <<<"$hist")
echo "$hist" | tail -n +2 | sed 's/^/  /'

per() { awk -v a="$1" -v n="$2" 'BEGIN { printf "%.2f", (n > 0) ? a / n : 0 }'; }
echo "N=$N size=$SIZE: paused after $first_live answers ($(per $((t1 - t0)) 1000) s); resumed: $replayed replayed, $second_live live ($(per $((t2 - t1)) 1000) s)"
echo "$summary"
result "$N × $SIZE B: wall, start to pause" "$(per $((t1 - t0)) 1000)" s -
result "$N × $SIZE B: wall, resume to end" "$(per $((t2 - t1)) 1000)" s -
result "$N × $SIZE B: server CPU per call, whole run" "$(per $((dev2 - dev0)) "$N")" ms -
result "$N × $SIZE B: server CPU per live call, start to pause" "$(per $((dev1 - dev0)) "$first_live")" ms -
result "$N × $SIZE B: server CPU per live call, resume" "$(per $((dev2 - dev1)) "$second_live")" ms -
result "$N × $SIZE B: worker CPU per call, whole run" "$(per $((workers2 - workers0)) "$N")" ms -
result "$N × $SIZE B: executions (resume and continue-as-new)" "$(field executions "$summary")" - -
result "$N × $SIZE B: history events per call" "$(per "$(field history_events "$summary")" "$N")" - -
result "$N × $SIZE B: history bytes per call" "$(per "$(field history_bytes "$summary")" "$N")" B -
result "$N × $SIZE B: largest execution's history" "$(per "$(field max_execution_bytes "$summary")" 1048576)" MB "<50"
result "$N × $SIZE B: largest execution's events" "$(field max_execution_events "$summary")" - "<51200"
result "$N × $SIZE B: workflow tasks" "$(field workflow_tasks "$summary")" - -
result "$N × $SIZE B: workflow tasks a worker took up after another (each replays the history)" "$(field workflow_task_moves "$summary")" - -
result "$N × $SIZE B: workflow tasks timed out" "$(field workflow_task_timeouts "$summary")" - -
result "$N × $SIZE B: blob store" "$(per "$(field blob_bytes "$summary")" 1048576)" MB -
