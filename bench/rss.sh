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
# The run is the workflow of executors.sh, run as one process (without the
# ancestor, see README "Using real agents"; the ancestor is the smaller of
# the two): its peak RSS is /usr/bin/time's, and the split into file and
# anonymous pages the largest seen in /proc every 10 ms. Once the run has
# started, the runtime unmaps the binary's pages only start-up needed
# (internal/exepages); DYNWORKFLOW_DEBUG=1 prints how many. Figures are
# printed, never asserted.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

N=${1:-1000}
REPS=${2:-3}
bench_init
write_fake_codex "$WORK/bin"
export PATH="$WORK/bin:$PATH"
# The workflow of executors.sh.
cat >bench-par.workflow.js <<'JS'
export const meta = { name: "bench_par", description: "N agents in one parallel() fan-out" };
const n = args.n;
const out = await parallel(Array.from({ length: n }, (_, i) => () => agent(`parallel task ${i}`, { label: `p${i}` })));
return { n, ok: out.filter(Boolean).length };
JS

# status PID: "file anon threads" in KB from /proc/PID/status, or empty.
status() {
	awk '/^RssFile:/ {f=$2} /^RssAnon:/ {a=$2} /^Threads:/ {t=$2} END {if (f) print f, a, t}' \
		"/proc/$1/status" 2>/dev/null || true
}

# sampled EXECUTOR: one run, as one process (DYNWORKFLOW_SINGLE_PROCESS:
# the runtime without its ancestor, so that /usr/bin/time's figure is the
# runtime's own peak); prints "peak file anon threads" in KB.
sampled() {
	rm -rf "$STATE"
	DYNWORKFLOW_SINGLE_PROCESS=1 /usr/bin/time -f %M -o "$WORK/maxrss" "$DW" --state-dir "$STATE" \
		run bench-par.workflow.js --json --executor "$1" --concurrency 16 \
		--max-agents "$N" --max-items "$N" --args "{\"n\":$N}" >"$WORK/out.json" 2>/dev/null &
	local top=$! pid="" file=0 anon=0 threads=0 s
	while kill -0 "$top" 2>/dev/null; do
		[[ -n $pid ]] || pid=$(pgrep -P "$top" | head -1 || true)
		if [[ -n $pid ]] && s=$(status "$pid") && [[ -n $s ]]; then
			read -r f a t <<<"$s"
			((f > file)) && file=$f
			((a > anon)) && anon=$a
			((t > threads)) && threads=$t
		fi
		sleep 0.01
	done
	wait "$top" || { echo "rss.sh: the $1 run failed" >&2; cat "$WORK/out.json" >&2; exit 1; }
	echo "$(tail -1 "$WORK/maxrss") $file $anon $threads"
}

mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

help_rss=()
for _ in $(seq "$REPS"); do
	help_rss+=("$(/usr/bin/time -f %M "$DW" --help 2>&1 >/dev/null | tail -1)")
done
echo "== dynworkflow --help: peak RSS $(for k in "${help_rss[@]}"; do printf '%s ' "$(mb "$k")"; done)MB"

for ex in simulate codex; do
	for r in $(seq "$REPS"); do
		read -r peak file anon threads <<<"$(sampled "$ex")"
		echo "== $ex, $N agents, round $r: peak RSS $(mb "$peak") MB (largest seen: file $(mb "$file") MB, anonymous $(mb "$anon") MB), threads $threads"
	done
done
