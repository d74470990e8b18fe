#!/usr/bin/env bash
# Resuming a finished 10,000-call run, every call replayed, through the CLI.
# Target: under 1 s.
#
#   bash bench/cli-resume.sh [N=10000] [REPS=5]
#
# The run is made once (--max-agents N --max-items N, since the defaults
# cap a run at 1,000 agents and a parallel() at 4,096 items), then
# `resume ID --json` is timed REPS times; each resume replays all N calls.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

N=${1:-10000}
REPS=${2:-5}
bench_init
write_fanout fanout.workflow.js

echo "creating a run of $N calls..." >&2
dw run fanout.workflow.js --args "{\"n\":$N}" --simulate-latency 0 --concurrency 16 \
	--max-agents "$N" --max-items "$N" --json >"$WORK/out.json"
id=$(json_field runId "$WORK/out.json")
[[ $(json_field status "$WORK/out.json") == completed && -n $id ]] || {
	echo "cli-resume: the first run did not complete" >&2
	cat "$WORK/out.json" >&2
	exit 1
}
journal=$(find "$STATE" -name "$id.jsonl")
echo "run $id: journal $(du -h "$journal" | cut -f1)" >&2

line=$("$MEASURE" -n "$REPS" -label "resume-$N" -stdout "$WORK/out.json" -- "$DW" --state-dir "$STATE" resume "$id" --json)
echo "$line"
replayed=$(json_field replayed "$WORK/out.json")
live=$(json_field live "$WORK/out.json")
if [[ $(json_field status "$WORK/out.json") != completed || $replayed != "$N" || $live != 0 ]]; then
	echo "cli-resume: the resume did not replay all $N calls (replayed $replayed, live $live)" >&2
	cat "$WORK/out.json" >&2
	exit 1
fi
result "cli resume: $N calls all replayed, wall" "$(awk -v ms="$(field wall_median_ms "$line")" 'BEGIN { printf "%.3f", ms / 1000 }')" s "<1"
result "cli resume: $N calls all replayed, peak RSS" "$(field rss_max_mb "$line")" MB -
