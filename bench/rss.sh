#!/usr/bin/env bash
# Where the peak RSS of a run goes (issue 26 asks at most 25 MB for the
# 1,000-agent run of a fake codex at concurrency 16): the binary's own pages
# (RssFile: code and read-only data the kernel mapped, 64 KB around each
# page touched) against the process's anonymous memory (RssAnon: heap,
# stacks, the runtime's metadata), for a command that does nothing
# (`--help`) and for the runtime process of N agents, simulated and through
# the fake codex of executors.sh.
#
#   bash bench/rss.sh [N=1000] [REPS=3]
#
# The runtime process (the child of the ancestor, see README "Using real
# agents") is sampled from /proc every 10 ms: VmHWM is the kernel's own
# peak, so the last sample's is exact; the split into file and anonymous
# pages is the largest seen. Figures are printed, never asserted.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

N=${1:-1000}
REPS=${2:-3}
bench_init
write_fake_codex "$WORK/bin"
export PATH="$WORK/bin:$PATH"
write_fanout fanout.workflow.js

# status PID: "hwm file anon threads" in KB from /proc/PID/status, or empty.
status() {
	awk '/^VmHWM:/ {h=$2} /^RssFile:/ {f=$2} /^RssAnon:/ {a=$2} /^Threads:/ {t=$2}
		END {if (h) print h, f, a, t}' "/proc/$1/status" 2>/dev/null || true
}

# sampled EXECUTOR: one run; prints "hwm file anon threads" of its runtime.
sampled() {
	rm -rf "$STATE"
	"$DW" --state-dir "$STATE" run fanout.workflow.js --json --executor "$1" --concurrency 16 \
		--max-agents "$N" --max-items "$N" --args "{\"n\":$N}" >"$WORK/out.json" 2>/dev/null &
	local top=$! pid="" hwm=0 file=0 anon=0 threads=0 s
	while kill -0 "$top" 2>/dev/null; do
		# The runtime is the ancestor's child; with
		# DYNWORKFLOW_SINGLE_PROCESS=1 there is none and it is top.
		[[ -n $pid ]] || pid=$(pgrep -P "$top" | head -1 || true)
		if s=$(status "${pid:-$top}") && [[ -n $s ]]; then
			read -r h f a t <<<"$s"
			((h > hwm)) && hwm=$h
			((f > file)) && file=$f
			((a > anon)) && anon=$a
			((t > threads)) && threads=$t
		fi
		sleep 0.01
	done
	wait "$top" || { echo "rss.sh: the $1 run failed" >&2; cat "$WORK/out.json" >&2; exit 1; }
	echo "$hwm $file $anon $threads"
}

mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

help_rss=()
for _ in $(seq "$REPS"); do
	help_rss+=("$(/usr/bin/time -f %M "$DW" --help 2>&1 >/dev/null | tail -1)")
done
echo "== dynworkflow --help: peak RSS $(for k in "${help_rss[@]}"; do printf '%s ' "$(mb "$k")"; done)MB"

for ex in simulate codex; do
	for r in $(seq "$REPS"); do
		read -r hwm file anon threads <<<"$(sampled "$ex")"
		echo "== $ex, $N agents, round $r: runtime peak RSS $(mb "$hwm") MB (largest seen: file $(mb "$file") MB, anonymous $(mb "$anon") MB), threads $threads"
	done
done
