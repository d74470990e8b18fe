#!/usr/bin/env bash
# The README's two commands as a new user runs them: a fresh, empty
# XDG_CACHE_HOME (no Temporal dev server built, none of .ci/run's caches)
# and no CI variable, nor any DYNWORKFLOW_ one; with --cold-gocache, an
# empty Go build cache too (GOMODCACHE is kept: downloading modules
# measures the network, not us).
# Prints the wall time of the first command, of every package of the
# second, and of the whole second command, and the load average before.
#
#   bash bench/fresh-tests.sh [--cold-gocache] [--keep] [-- PACKAGES/FLAGS...]
#
# The test results cache is bypassed (-count=1) so that every package
# runs. The test command's output goes to $WORK/test.json (kept when it
# fails); --keep keeps $WORK (the fresh caches) anyway.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cold=0 keep=0
while (($#)); do
	case $1 in
	--cold-gocache) cold=1 ;;
	--keep) keep=1 ;;
	--) shift; break ;;
	*) echo "usage: bash bench/fresh-tests.sh [--cold-gocache] [--keep] [-- PACKAGES/FLAGS...]" >&2; exit 64 ;;
	esac
	shift
done
(($#)) || set -- ./...

WORK=$(mktemp -d "${TMPDIR:-/tmp}/dynworkflow-fresh-XXXXXX")
cleanup() {
	if ((keep)); then
		echo "kept $WORK" >&2
	else
		chmod -R u+w "$WORK" 2>/dev/null || true
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# Go's build cache lives under XDG_CACHE_HOME unless GOCACHE says
# otherwise: keep the current one unless asked for a cold one.
if ((cold)); then
	export GOCACHE=$WORK/gocache
else
	GOCACHE=$(go env GOCACHE)
	export GOCACHE
fi
export XDG_CACHE_HOME=$WORK/cache
mkdir -p "$XDG_CACHE_HOME"
unset CI $(compgen -e | grep "^DYNWORKFLOW_" || true)

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
# cpu sets CPU to the CPU seconds (user + system) of every finished child
# so far, from bash's times (run in this shell, not a subshell): what a
# command costs, whatever else the machine runs.
cpu() {
	times >"$WORK/times"
	CPU=$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); n += p[1] * 60 + p[2] } printf "%.1f", n }' "$WORK/times")
}

echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); GOCACHE $(go env GOCACHE)"

t0=$(now) && cpu && c0=$CPU
go run ./cmd/dynworkflow run examples/pipeline.workflow.js --simulate-latency 5ms..50ms >"$WORK/run.log" 2>&1 || {
	cat "$WORK/run.log" >&2
	echo "fresh-tests: the README's first command failed" >&2
	exit 1
}
t1=$(now) && cpu && c1=$CPU
echo "first command (go run ./cmd/dynworkflow run examples/pipeline.workflow.js ...): $(elapsed "$t0" "$t1") s wall, $(elapsed "$c0" "$c1") s CPU"

go build -o "$WORK/testreport" ./bench/cmd/testreport
t0=$(now) && cpu && c0=$CPU
status=0
go test -race -count=1 -json "$@" >"$WORK/test.json" 2>"$WORK/test.stderr" || status=$?
t1=$(now) && cpu && c1=$CPU

echo "second command (go test -race ./...), per package, slowest first:"
"$WORK/testreport" <"$WORK/test.json" | sed 's/^/  /' || true
echo "second command: $(elapsed "$t0" "$t1") s wall, $(elapsed "$c0" "$c1") s CPU in all (load average now $(cut -d' ' -f1-3 /proc/loadavg)), exit status $status"
if ((status != 0)); then
	cat "$WORK/test.stderr" >&2
	echo "fresh-tests: the test command failed; its output: $WORK/test.json (kept)" >&2
	keep=1
	exit "$status"
fi
