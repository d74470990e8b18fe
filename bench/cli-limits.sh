#!/usr/bin/env bash
# What hostile or merely large input costs through the CLI (issue 21):
#
#   - `list` when a run's journal ends with a 20 MB line (a run that
#     returned a 20 MB string). Target: under 50 ms (it took 18 s when
#     reading the last line was quadratic).
#   - `run` with 50 MB of --args (@file). It took 133 s and 725 MB.
#   - refusing a result nested 20,000 and 200,000 levels deep (4 s and
#     minutes before the nesting limit), and the 1.2 MB script of 600,000
#     nested [ (a fatal stack overflow before).
#
#   bash bench/cli-limits.sh [REPS=5]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REPS=${1:-5}
bench_init

cat >big-result.workflow.js <<'JS'
export const meta = { name: 'big-result', description: 'returns a 20 MB string' }
await agent('one call')
return 'x'.repeat(20e6)
JS
dw run big-result.workflow.js --simulate-latency 0 --json >"$WORK/out.json"
[[ $(json_field status "$WORK/out.json") == completed ]] || {
	echo "cli-limits: the 20 MB run did not complete" >&2
	exit 1
}
line=$("$MEASURE" -n "$REPS" -label "list-20mb-last-line" -- "$DW" --state-dir "$STATE" list)
echo "$line"
result "list: a run whose journal ends with a 20 MB line, wall" "$(field wall_median_ms "$line")" ms "<50"
result "list: a run whose journal ends with a 20 MB line, CPU" "$(field cpu_median_ms "$line")" ms -
# The floor on this machine now: list of a state directory with no run,
# the process's start and end alone. On a loaded machine the wall time is
# mostly waiting for a CPU; read the figure above against this one.
mkdir -p "$WORK/empty-state"
line=$("$MEASURE" -n "$REPS" -label "list-no-runs" -- "$DW" --state-dir "$WORK/empty-state" list)
echo "$line"
result "list with no runs (the floor), wall" "$(field wall_median_ms "$line")" ms -
result "list with no runs (the floor), CPU" "$(field cpu_median_ms "$line")" ms -

cat >args.workflow.js <<'JS'
export const meta = { name: 'args', description: 'reads big args' }
await agent('one call')
return args.blob.length
JS
awk 'BEGIN { printf "{\"blob\":\""; for (i = 0; i < 50 * 1000; i++) printf "%01000d", 0; printf "\"}" }' >"$WORK/args.json"
line=$("$MEASURE" -n "$REPS" -label "run-50mb-args" -- "$DW" --state-dir "$STATE" run args.workflow.js --simulate-latency 0 --args "@$WORK/args.json")
echo "$line"
result "run with 50 MB of --args, wall" "$(field wall_median_ms "$line")" ms -
result "run with 50 MB of --args, peak RSS" "$(field rss_max_mb "$line")" MB -

for n in 20000 200000; do
	cat >deep.workflow.js <<JS
export const meta = { name: 'deep', description: 'a result nested $n levels deep' }
let o = 'leaf'
for (let i = 0; i < $n; i++) o = [o]
await agent('one call')
return o
JS
	line=$("$MEASURE" -n "$REPS" -expect-exit 1 -label "deep-result-$n" -- "$DW" --state-dir "$STATE" run deep.workflow.js --simulate-latency 0)
	echo "$line"
	result "run refusing a result nested $n levels deep, wall" "$(field wall_median_ms "$line")" ms -
done

awk 'BEGIN { printf "export const meta = { name: \"nested\", description: \"600,000 [\" }\nreturn "
	for (i = 0; i < 600000; i++) printf "["; for (i = 0; i < 600000; i++) printf "]"; print "" }' >nested.workflow.js
line=$("$MEASURE" -n "$REPS" -expect-exit 1 -label "nested-script" -- "$DW" --state-dir "$STATE" run nested.workflow.js)
echo "$line"
result "run refusing the 1.2 MB script of 600,000 nested [, wall" "$(field wall_median_ms "$line")" ms -
