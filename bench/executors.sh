#!/usr/bin/env bash
# The executors issue's figures: our overhead per external call, and a
# 1,000-agent parallel() (concurrency 16) through a tiny fake `codex`
# script on PATH, run by dynworkflow and by the Node runtime
# @fish59fish/dynamic-workflows@0.1.0, against the floor of 1,000 bare
# spawns of the same fake. Targets: overhead at most 5 ms per call; wall
# time within 1.15x of the floor and peak RSS at most 25 MB; at least 10x
# less wall time beyond the floor than the Node runtime.
#
#   bash bench/executors.sh [N=1000] [REPS=3]
#
# Each of the REPS rounds runs the floor, dynworkflow and the Node runtime
# once each, one after another, so that a machine whose speed drifts
# (a shared VM) drifts for all of them; the figures are the medians of the
# rounds. BEFORE=REV (a git revision) adds the dynworkflow built from REV
# to every round, to measure a change side by side; PEER=0 leaves out the
# Node runtime (installed by this script with npm into its temporary
# folder). The fake codex is a compiled one (bench/cmd/fakecodex), as
# issue 26 measured; FAKE=bash spawns the research's bash fake instead
# (see write_fake_codex in lib.sh). Figures are printed, never asserted.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

N=${1:-1000}
REPS=${2:-3}
PEER=${PEER:-1}
BEFORE=${BEFORE:-}
bench_init

loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'; }
echo "== load average at the start: $(loadavg)" >&2

echo "== overhead per external call (go test -bench CallOverhead ./executors/codex/)" >&2
bench_out=$(cd "$REPO" && go test -run '^$' -bench CallOverhead -benchtime 300x -count 1 ./executors/codex/)
echo "$bench_out" >&2
metric() { awk -v unit="$1" '$1 ~ /^BenchmarkCallOverhead/ { for (i = 3; i <= NF; i++) if ($i == unit) print $(i - 1) }' <<<"$bench_out"; }
result "codex executor: overhead per call beyond the child's run" "$(metric overhead-ms/call)" ms "<=5"
result "codex executor: the fake child's own run" "$(metric child-ms/call)" ms -

write_fake_codex "$WORK/bin"
export PATH="$WORK/bin:$PATH"

# One workflow both runtimes accept.
cat >bench-par.workflow.js <<'JS'
export const meta = { name: "bench_par", description: "N agents in one parallel() fan-out" };
const n = args.n;
const out = await parallel(Array.from({ length: n }, (_, i) => () => agent(`parallel task ${i}`, { label: `p${i}` })));
return { n, ok: out.filter(Boolean).length };
JS

(cd "$REPO" && go build -o "$WORK/spawnfloor" ./bench/cmd/spawnfloor)
if [[ -n $BEFORE ]]; then
	echo "== building dynworkflow at $BEFORE" >&2
	mkdir -p "$WORK/before-src"
	git -C "$REPO" archive "$BEFORE" | tar -x -C "$WORK/before-src"
	(cd "$WORK/before-src" && CGO_ENABLED=0 go build -o "$WORK/dynworkflow-before" ./cmd/dynworkflow)
fi
PEER_CLI=
if [[ $PEER != 0 ]]; then
	echo "== the Node runtime: npm install @fish59fish/dynamic-workflows@0.1.0" >&2
	if command -v npm >/dev/null && (cd "$WORK" && mkdir -p peer && npm install --prefix peer --no-audit --no-fund --loglevel=error @fish59fish/dynamic-workflows@0.1.0 >&2); then
		PEER_CLI=$WORK/peer/node_modules/@fish59fish/dynamic-workflows/dist/standalone-cli.js
	else
		echo "executors.sh: npm could not install the Node runtime; its column is empty" >&2
	fi
fi

# Where perf is at hand, every run is also counted with perf stat: the CPU
# time (task-clock) of its whole process tree, agents included, which a
# loaded machine changes far less than the wall time. The floor's CPU is
# the agents' own, so the difference is the runtime's.
PERF=
if command -v perf >/dev/null && perf stat -x, -e task-clock -o /dev/null -- true 2>/dev/null; then
	PERF=perf
fi

# counted FILE CMD...: CMD under perf stat, its task-clock in ms into FILE.
counted() {
	local file=$1
	shift
	if [[ -n $PERF ]]; then
		perf stat -x, -e task-clock -o "$file.perf" -- "$@"
		awk -F, '$3 == "task-clock" { print $1 }' "$file.perf" >"$file"
	else
		"$@"
		echo "?" >"$file"
	fi
}

# ours LABEL BIN: one run of a dynworkflow binary; prints measure's line.
ours() {
	local state=$WORK/state-$1
	rm -rf "$state"
	counted "$WORK/cpu" "$MEASURE" -n 1 -label "$1" -stdout "$WORK/$1.json" -- \
		"$2" --state-dir "$state" run bench-par.workflow.js --json --executor codex --concurrency 16 \
		--max-agents "$N" --max-items "$N" --args "{\"n\":$N}"
	if [[ $(json_field status "$WORK/$1.json") != completed || $(json_field live "$WORK/$1.json") != "$N" ]]; then
		echo "executors.sh: $1 did not complete $N calls" >&2
		cat "$WORK/$1.json" >&2
		exit 1
	fi
}

# peer: one run of the Node runtime; prints measure's line.
peer() {
	rm -rf "$WORK/peer-state"
	counted "$WORK/cpu" "$MEASURE" -n 1 -label peer -stdout "$WORK/peer.json" -- \
		node "$PEER_CLI" run bench-par.workflow.js --json --local --executor codex --concurrency 16 \
		--max-agents "$N" --state-dir "$WORK/peer-state" --args "{\"n\":$N}"
	grep -q "\"ok\": *$N" "$WORK/peer.json" || echo "executors.sh: warning: the Node runtime's output does not show $N answers" >&2
}

# Each round: the floor (the same children spawned with nothing around
# them: no runtime can beat it here), then each runtime once.
declare -A wall rss cpu
for round in $(seq 1 "$REPS"); do
	echo "== round $round of $REPS: $N agents at concurrency 16 (load average $(loadavg))" >&2
	f=$(counted "$WORK/cpu" "$WORK/spawnfloor" -n "$N" -c 16 -- "$WORK/bin/codex" exec --json - | sed -n 's/^wall_ms=//p')
	wall[floor]+="$f "
	cpu[floor]+="$(cat "$WORK/cpu") "
	echo "floor wall_ms=$f task_clock_ms=$(cat "$WORK/cpu")" >&2
	for who in ours ${BEFORE:+before} ${PEER_CLI:+peer}; do
		case $who in
		ours) line=$(ours ours "$DW") ;;
		before) line=$(ours before "$WORK/dynworkflow-before") ;;
		peer) line=$(peer) ;;
		esac
		echo "$line task_clock_ms=$(cat "$WORK/cpu")" >&2
		wall[$who]+="$(field wall_median_ms "$line") "
		rss[$who]+="$(field rss_max_mb "$line") "
		cpu[$who]+="$(cat "$WORK/cpu") "
	done
done
echo "== load average at the end: $(loadavg)" >&2

# The figures are medians over the rounds, and a comparison with the floor
# is the median of the rounds' own comparisons: each round's runs met the
# same machine.
median() { tr ' ' '\n' <<<"$1" | awk 'NF' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "?"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
most() { tr ' ' '\n' <<<"$1" | awk 'NF' | sort -g | tail -n 1; }
secs() { awk -v ms="$1" 'BEGIN { if (ms != "?") printf "%.3f", ms / 1000; else print "?" }'; }
# paired OP A B: per round, A/B (OP=ratio) or (A-B)/N in ms (OP=beyond).
paired() {
	awk -v op="$1" -v a="$2" -v b="$3" -v n="$N" 'BEGIN {
		k = split(a, x, " "); split(b, y, " ")
		for (i = 1; i <= k; i++) {
			if (x[i] == "?" || y[i] == "?" || y[i] + 0 <= 0) continue
			printf "%s ", (op == "ratio") ? x[i] / y[i] : (x[i] - y[i]) / n
		}
	}'
}
fmt() { awk -v v="$1" -v f="$2" 'BEGIN { if (v == "?" || v == "") print "?"; else printf f, v }'; }

result "$N-agent parallel via fake codex: bare spawns, the floor" "$(secs "$(median "${wall[floor]}")")" s -
result "$N-agent parallel via fake codex: bare spawns, the floor, CPU" "$(secs "$(median "${cpu[floor]}")")" s -
for who in ours ${BEFORE:+before} ${PEER_CLI:+peer}; do
	name=dynworkflow
	[[ $who == before ]] && name="dynworkflow at $BEFORE"
	[[ $who == peer ]] && name="Node runtime"
	goal_wall=- goal_rss=-
	[[ $who == ours ]] && goal_wall="<=1.15" goal_rss="<=25"
	result "$N-agent parallel: $name wall" "$(secs "$(median "${wall[$who]}")")" s -
	result "$N-agent parallel: $name over the floor" "$(fmt "$(median "$(paired ratio "${wall[$who]}" "${wall[floor]}")")" %.2f)" x "$goal_wall"
	result "$N-agent parallel: $name wall beyond the floor, per agent" "$(fmt "$(median "$(paired beyond "${wall[$who]}" "${wall[floor]}")")" %.3f)" ms -
	result "$N-agent parallel: $name peak RSS" "$(most "${rss[$who]}")" MB "$goal_rss"
	result "$N-agent parallel: $name CPU, agents included" "$(secs "$(median "${cpu[$who]}")")" s -
	result "$N-agent parallel: $name CPU over the floor's" "$(fmt "$(median "$(paired ratio "${cpu[$who]}" "${cpu[floor]}")")" %.2f)" x -
	result "$N-agent parallel: $name CPU beyond the floor's, per agent" "$(fmt "$(median "$(paired beyond "${cpu[$who]}" "${cpu[floor]}")")" %.3f)" ms -
done
if [[ -n $PEER_CLI ]]; then
	for what in wall cpu; do
		declare -n per=$what
		o=$(median "$(paired beyond "${per[ours]}" "${per[floor]}")") p=$(median "$(paired beyond "${per[peer]}" "${per[floor]}")")
		label="wall beyond the floor"
		[[ $what == cpu ]] && label="CPU beyond the floor's"
		result "$N-agent parallel: $label, Node runtime over ours" \
			"$(awk -v o="$o" -v p="$p" 'BEGIN { if (o + 0 > 0) printf "%.1f", p / o; else print "?" }')" x ">=10"
		unset -n per
	done
	result "$N-agent parallel: peak RSS, Node runtime over ours" \
		"$(awk -v p="$(most "${rss[peer]}")" -v o="$(most "${rss[ours]}")" 'BEGIN { if (o + 0 > 0) printf "%.2f", p / o; else print "?" }')" x -
fi
