#!/usr/bin/env bash
# The test suite on a machine that is busy with something else: runs
# `go test -race -count=1` over the packages given (default ./...) ROUNDS
# times while BURNERS processes keep every CPU busy (stress --cpu, or busy
# shell loops where stress is not installed), and prints each package's
# result and wall time per round, then a summary. No test may depend on an
# idle machine: every package should pass every round, each well inside go
# test's 10-minute timeout.
#
#   bash bench/stress-tests.sh [-n ROUNDS=3] [-b BURNERS=2×CPUs] [PACKAGES/FLAGS...]
#
# The environment is the caller's (CI=true and the caches of .ci/run make
# every test run; without them some skip). Each round's `go test -json`
# output is kept in $WORK when a package failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=3
BURNERS=$((2 * $(nproc)))
while getopts "n:b:" opt; do
	case $opt in
	n) ROUNDS=$OPTARG ;;
	b) BURNERS=$OPTARG ;;
	*) echo "usage: bash bench/stress-tests.sh [-n ROUNDS] [-b BURNERS] [PACKAGES/FLAGS...]" >&2; exit 64 ;;
	esac
done
shift $((OPTIND - 1))
(($#)) || set -- ./...

WORK=$(mktemp -d "${TMPDIR:-/tmp}/dynworkflow-stress-XXXXXX")
burners=()
keep=0
cleanup() {
	for pid in "${burners[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	if ((keep)); then
		echo "logs kept in $WORK" >&2
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

go build -o "$WORK/testreport" ./bench/cmd/testreport

if command -v stress >/dev/null 2>&1; then
	stress --cpu "$BURNERS" >/dev/null 2>&1 &
	burners+=($!)
	burner="stress --cpu $BURNERS"
else
	for ((i = 0; i < BURNERS; i++)); do
		bash -c 'while :; do :; done' &
		burners+=($!)
	done
	burner="$BURNERS busy shell loops"
fi
echo "$(nproc) CPUs, burner: $burner; go test -race -count=1 $*; $ROUNDS rounds"

failed=0
for ((round = 1; round <= ROUNDS; round++)); do
	echo "round $round (load average $(cut -d' ' -f1-3 /proc/loadavg)):"
	start=$(date +%s)
	go test -race -count=1 -json "$@" >"$WORK/round-$round.json" 2>"$WORK/round-$round.stderr" || true
	status=0
	"$WORK/testreport" -tsv <"$WORK/round-$round.json" >"$WORK/round-$round.tsv" || status=$?
	# A package that did not build has no JSON result: go test says so on stderr.
	if grep -q '^FAIL\|build failed\|setup failed' "$WORK/round-$round.stderr"; then
		cat "$WORK/round-$round.stderr" >&2
		status=1
	fi
	awk -F'\t' '$1 != "none" { printf "  %-4s %7.1f s  %s\n", $1, $2, $3 }' "$WORK/round-$round.tsv"
	echo "  round $round: $(($(date +%s) - start)) s in all"
	if ((status != 0)); then
		failed=$((failed + 1))
		keep=1
		"$WORK/testreport" <"$WORK/round-$round.json" | sed -n '/^--- /,$p' >&2 || true
	fi
done

echo "summary over $ROUNDS rounds (passed rounds, slowest round):"
cat "$WORK"/round-*.tsv | awk -F'\t' '$1 != "none" {
	n[$3]++; if ($1 == "ok") ok[$3]++; if ($2 > worst[$3]) worst[$3] = $2
} END { for (p in n) printf "  %d/%d  %7.1f s  %s\n", ok[p], n[p], worst[p], p }' | sort -k2,2 -rn
if ((failed > 0)); then
	echo "stress-tests: $failed of $ROUNDS rounds had a failure" >&2
	exit 1
fi
