#!/usr/bin/env bash
# Scale: one run of 100, 1,000 and 10,000 agents (one parallel(),
# concurrency 16) on the simulated executor (zero latency) and through the
# fake codex on PATH; then, on the largest run of each, `resume` of the
# finished run (every call replayed) and `list` afterwards; and `show` of
# the 1,000-agent run. Target: the cost per agent does not grow with the
# run (the largest run's CPU per agent, whole tree, over the 1,000-agent
# run's).
#
#   bash bench/scale.sh [SIZES="100 1000 10000"] [REPS=3]
#
# SCALE_EXECUTORS (default "simulate codex") picks the executors. CPU is the
# rusage of the whole tree (agents included, hence also shown beyond the
# floor: the same number of bare spawns of the fake, `bench/cmd/spawnfloor`,
# measured at each size). Figures are printed, never asserted.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SIZES=${1:-"100 1000 10000"}
REPS=${2:-3}
EXECUTORS=${SCALE_EXECUTORS:-"simulate codex"}
bench_init
write_fanout fanout.workflow.js
write_fake_codex "$WORK/bin"
export PATH="$WORK/bin:$PATH"
(cd "$REPO" && go build -o "$WORK/spawnfloor" ./bench/cmd/spawnfloor)

loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'; }
per() { awk -v v="$1" -v n="$2" -v f="${3:-%.3f}" 'BEGIN { if (v == "?" || v == "" || n + 0 == 0) print "?"; else printf f, v / n }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "?" || b == "?" || b + 0 == 0) print "?"; else printf "%.2f", a / b }'; }
largest=$(tr ' ' '\n' <<<"$SIZES" | awk 'NF' | sort -n | tail -n 1)
echo "== load average at the start: $(loadavg)" >&2

declare -A cpu_per
for ex in $EXECUTORS; do
	extra=(--simulate-latency 0)
	[[ $ex == simulate ]] || extra=(--executor "$ex")
	for n in $SIZES; do
		state=$WORK/state-$ex-$n
		line=$("$MEASURE" -n 1 -label "run-$ex-$n" -stdout "$WORK/out.json" -- \
			"$DW" --state-dir "$state" run fanout.workflow.js --args "{\"n\":$n}" --concurrency 16 \
			--max-agents "$n" --max-items "$n" --json "${extra[@]}")
		id=$(json_field runId "$WORK/out.json")
		if [[ $(json_field status "$WORK/out.json") != completed || $(json_field live "$WORK/out.json") != "$n" ]]; then
			echo "scale: the $n-agent run on $ex did not complete with $n live calls" >&2
			cat "$WORK/out.json" >&2
			exit 1
		fi
		journal=$(find "$state" -name "$id.jsonl" -printf '%s\n')
		state_bytes=$(du -sb "$state" | cut -f1)
		wall=$(field wall_median_ms "$line") cpu=$(field cpu_median_ms "$line") rss=$(field rss_max_mb "$line")
		floor_cpu=?
		if [[ $ex == codex ]]; then
			fl=$("$MEASURE" -n 1 -label "floor-$n" -- "$WORK/spawnfloor" -n "$n" -c 16 -- "$WORK/bin/codex" exec --json -)
			floor_cpu=$(field cpu_median_ms "$fl")
			echo "$fl" >&2
		fi
		echo "$line journal_bytes=$journal state_bytes=$state_bytes floor_cpu_ms=$floor_cpu (load $(loadavg))"
		cpu_per[$ex-$n]=$(per "$cpu" "$n")
		result "scale, $ex, $n agents: wall" "$(per "$wall" 1000)" s -
		result "scale, $ex, $n agents: wall per agent" "$(per "$wall" "$n")" ms -
		result "scale, $ex, $n agents: CPU per agent (tree)" "${cpu_per[$ex-$n]}" ms -
		if [[ $floor_cpu != "?" ]]; then
			# Small beside the agents' own CPU, so noisy: the flatness check
			# below uses the whole tree's.
			result "scale, $ex, $n agents: CPU per agent beyond the floor's" \
				"$(awk -v c="$cpu" -v f="$floor_cpu" -v n="$n" 'BEGIN { printf "%.3f", (c - f) / n }')" ms -
		fi
		result "scale, $ex, $n agents: peak RSS" "$rss" MB -
		result "scale, $ex, $n agents: journal" "$(per "$journal" 1000000 %.2f)" MB -
		result "scale, $ex, $n agents: journal per agent" "$(per "$journal" "$n" %.0f)" B -

		if [[ $n == 1000 && $ex == simulate ]]; then
			for mode in text json; do
				flag=()
				[[ $mode == text ]] || flag=(--json)
				sl=$("$MEASURE" -n "$REPS" -label "show-$n-$mode" -- "$DW" --state-dir "$state" show "$id" "${flag[@]}")
				echo "$sl"
				result "show of a $n-agent run${flag:+ --json}: wall" "$(field wall_median_ms "$sl")" ms -
				result "show of a $n-agent run${flag:+ --json}: CPU" "$(field cpu_median_ms "$sl")" ms -
			done
		fi
		if [[ $n == "$largest" ]]; then
			rl=$("$MEASURE" -n "$REPS" -label "resume-$ex-$n" -stdout "$WORK/resume.json" -- "$DW" --state-dir "$state" resume "$id" --json)
			echo "$rl"
			if [[ $(json_field status "$WORK/resume.json") != completed || $(json_field replayed "$WORK/resume.json") != "$n" || $(json_field live "$WORK/resume.json") != 0 ]]; then
				echo "scale: the resume of the $n-agent run on $ex did not replay every call" >&2
				cat "$WORK/resume.json" >&2
				exit 1
			fi
			result "scale, $ex, $n agents: resume, all replayed, wall" "$(per "$(field wall_median_ms "$rl")" 1000)" s -
			result "scale, $ex, $n agents: resume, all replayed, CPU" "$(per "$(field cpu_median_ms "$rl")" 1000)" s -
			result "scale, $ex, $n agents: resume, peak RSS" "$(field rss_max_mb "$rl")" MB -
			ll=$("$MEASURE" -n "$REPS" -label "list-$ex-$n" -- "$DW" --state-dir "$state" list)
			echo "$ll"
			result "scale, $ex, $n agents: list afterwards, wall" "$(field wall_median_ms "$ll")" ms -
		fi
	done
	if [[ -n ${cpu_per[$ex-1000]:-} && -n ${cpu_per[$ex-$largest]:-} && $largest != 1000 ]]; then
		result "scale, $ex: CPU per agent at $largest over at 1000 (flat)" "$(ratio "${cpu_per[$ex-$largest]}" "${cpu_per[$ex-1000]}")" x "<=1.15"
	fi
done
echo "== load average at the end: $(loadavg)" >&2
