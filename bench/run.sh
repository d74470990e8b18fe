#!/usr/bin/env bash
# Runs every benchmark of bench/README.md and prints one summary table:
# the engine's Go benchmarks (go test -bench ./engine/), the dashboard's
# first paint (chromium, skipped without it), then the CLI scripts
# (cli-fanout.sh, cli-list.sh, cli-resume.sh, cli-limits.sh, scale.sh,
# executors.sh: the last installs the Node runtime with npm; PEER=0 leaves
# it out, and EXECUTORS=0 leaves out executors.sh).
#
#   bash bench/run.sh
#
# BENCHTIME (default 1s) is passed to go test -benchtime; REPS (default 5)
# is how many times each CLI command is timed. Figures are printed, never
# asserted: the verdict column only compares them with the issue's goals.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BENCHTIME=${BENCHTIME:-1s}
REPS=${REPS:-5}
OUT=$(mktemp -d "${TMPDIR:-/tmp}/dynworkflow-bench-run.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
trap 'exit 130' INT TERM
cd "$REPO"

echo "== machine"
echo "$(go version), $(getconf _NPROCESSORS_ONLN) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'), TMPDIR on $(df -PT "${TMPDIR:-/tmp}" 2>/dev/null | awk 'NR == 2 { print $2 }')"

echo "== building"
CGO_ENABLED=0 go build -o "$OUT/dynworkflow" ./cmd/dynworkflow
go build -o "$OUT/measure" ./bench/cmd/measure
export DYNWORKFLOW_BIN=$OUT/dynworkflow MEASURE_BIN=$OUT/measure

echo "== go test -run '^\$' -bench . -benchtime $BENCHTIME ./engine/"
go test -run '^$' -bench . -benchtime "$BENCHTIME" -count 1 ./engine/ | tee "$OUT/go-bench.txt"

echo "== go test -run '^\$' -bench Isolation10k -benchtime 10x ./internal/worktree/"
go test -run '^$' -bench Isolation10k -benchtime 10x -count 1 ./internal/worktree/ | tee -a "$OUT/go-bench.txt"

echo "== go test -run '^\$' -bench DashboardFirstPaint1000 -benchtime 3x ./web/browsertest/"
go test -run '^$' -bench DashboardFirstPaint1000 -benchtime 3x -count 1 ./web/browsertest/ | tee -a "$OUT/go-bench.txt" || true

# gb NAME UNIT: a metric of a Go benchmark, by name without the -GOMAXPROCS
# suffix and by unit.
gb() {
	awk -v name="$1" -v unit="$2" '{
		n = $1; sub(/-[0-9]+$/, "", n)
		if (n == name) for (i = 3; i <= NF; i++) if ($i == unit) { print $(i - 1); exit }
	}' "$OUT/go-bench.txt"
}

{
	for name in $(awk '$1 ~ /^BenchmarkParallelNoop1000\// { n = $1; sub(/-[0-9]+$/, "", n); print n }' "$OUT/go-bench.txt"); do
		conc=${name#*/}
		result "engine: 1,000 no-op calls ($conc), CPU per call" "$(gb "$name" cpu-µs/call)" µs "<=20"
		result "engine: 1,000 no-op calls ($conc), CPU per call beyond fsync" "$(gb "$name" cpu-beyond-fsync-µs/call)" µs "<=20"
		result "engine: 1,000 no-op calls ($conc), marginal CPU per call beyond fsync" "$(gb "$name" cpu-marginal-beyond-fsync-µs/call)" µs "<=20"
		result "engine: 1,000 no-op calls ($conc), fixed CPU per run (VM, lease, snapshots)" "$(gb "$name" cpu-µs/run-fixed)" µs -
		result "engine: 1,000 no-op calls ($conc), wall per call" "$(gb "$name" wall-µs/call)" µs -
		result "engine: 1,000 no-op calls ($conc), fsyncs per finished call" "$(gb "$name" fsyncs/call)" - -
		result "engine: one bare append+fdatasync here, CPU" "$(gb "$name" fsync-cpu-µs)" µs -
	done
	b100=$(gb BenchmarkBytesPerCall/n=100 bytes/call)
	b1000=$(gb BenchmarkBytesPerCall/n=1000 bytes/call)
	result "engine: bytes written per call, n=100" "$b100" B -
	result "engine: bytes written per call, n=1000" "$b1000" B -
	result "engine: bytes per call, n=1000 over n=100 (flat)" "$(awk -v a="$b1000" -v b="$b100" 'BEGIN { printf "%.3f", a / b }')" x "<=1.05"
	result "engine: journal bytes per call, n=1000" "$(gb BenchmarkBytesPerCall/n=1000 journal-bytes/call)" B -
	result "engine: List, 50 runs x 200 calls (in process)" "$(gb BenchmarkList50x200 ms/list)" ms -
	result "engine: List, one run whose journal ends with a 20 MB line (in process)" "$(gb BenchmarkListHugeLastLine ms/list)" ms "<50"
	result "engine: List, one run whose journal ends with a 20 MB line, CPU" "$(gb BenchmarkListHugeLastLine cpu-ms/list)" ms -
	result "engine: resume 10,000 calls all replayed" "$(awk -v ms="$(gb BenchmarkResumeAllReplayed10000 ms/resume)" 'BEGIN { printf "%.3f", ms / 1000 }')" s "<1"
	for unit in ms/call cpu-ms/call; do
		u=${unit%/call}
		result "isolation, 10k files: a no-op call waits for (set-up + settle), $u" "$(gb BenchmarkIsolation10k/call-waits "$unit")" ms "<300"
		result "isolation, 10k files: set-up + settle + removal in sequence, $u" "$(gb BenchmarkIsolation10k/call-total "$unit")" ms "<300"
		result "isolation, 10k files: floor git worktree add, $u" "$(gb BenchmarkIsolation10k/floor-add "$unit")" ms -
		result "isolation, 10k files: floor add + remove + branch -D, $u" "$(gb BenchmarkIsolation10k/floor-add-remove "$unit")" ms -
		result "isolation, 10k files: a call editing one file (set-up + commit), $u" "$(gb BenchmarkIsolation10k/edit-waits "$unit")" ms -
	done
	result "engine: finished-to-durable window, 16 at a time, p50" "$(gb BenchmarkFinishedToDurable p50-ms)" ms -
	result "engine: finished-to-durable window, 16 at a time, p99" "$(gb BenchmarkFinishedToDurable p99-ms)" ms "<20"
	result "engine: finished-to-durable window, 16 at a time, max" "$(gb BenchmarkFinishedToDurable max-ms)" ms -
	result "engine: one bare append+fdatasync here, wall" "$(gb BenchmarkFinishedToDurable fsync-ms)" ms -
	result "dashboard: first paint of a finished 1,000-agent run" "$(gb BenchmarkDashboardFirstPaint1000 first-paint-ms)" ms -
	result "dashboard: of which fetching the run's detail" "$(gb BenchmarkDashboardFirstPaint1000 fetch-ms)" ms -
	result "dashboard: of which building the view" "$(gb BenchmarkDashboardFirstPaint1000 build-ms)" ms -
} >"$OUT/results.tsv"

scripts=(cli-fanout.sh cli-list.sh cli-resume.sh cli-limits.sh scale.sh)
[[ ${EXECUTORS:-1} == 0 ]] || scripts+=(executors.sh)
for script in "${scripts[@]}"; do
	echo "== bench/$script"
	args=()
	case $script in
	cli-fanout.sh) args=(1000 "$REPS") ;;
	cli-list.sh) args=(50 200 "$REPS") ;;
	cli-resume.sh) args=(10000 "$REPS") ;;
	cli-limits.sh) args=("$REPS") ;;
	scale.sh) args=("100 1000 10000" 3) ;;
	executors.sh) args=(1000 3) ;;
	esac
	bash "$BENCH_DIR/$script" "${args[@]}" | tee -a "$OUT/cli.txt"
done
grep '^RESULT' "$OUT/cli.txt" >>"$OUT/results.tsv" || true

echo
echo "== summary (goals from the issue; figures are printed, never asserted)"
awk -F'\t' '
	BEGIN { printf "%-64s %12s %-4s %-8s %s\n", "figure", "measured", "unit", "goal", "verdict"
	        printf "%-64s %12s %-4s %-8s %s\n", "------", "--------", "----", "----", "-------" }
	$1 == "RESULT" { printf "%-64s %12s %-4s %-8s %s\n", $2, $3, $4, $5, $6 }' "$OUT/results.tsv"
