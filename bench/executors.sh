#!/usr/bin/env bash
# The executors issue's figures: our overhead per external call, and a
# 1,000-agent parallel() (concurrency 16) through a tiny fake `codex`
# script on PATH, run by dynworkflow and by the Node peer
# @fish59fish/dynamic-workflows@0.1.0 side by side, against the floor of
# 1,000 bare spawns of the same fake in the same run. Targets: overhead at
# most 5 ms per call; wall time within 1.10x of the floor and peak RSS
# under 25 MB; at least 3x less wall time and 4x less peak RSS than the
# peer (measured in research: 2.56 s and 118 MB with --json).
#
#   bash bench/executors.sh [N=1000] [REPS=3]
#
# Needs npm and Node for the peer, installed by this script into its
# temporary folder. Figures are printed, never asserted.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

N=${1:-1000}
REPS=${2:-3}
bench_init

echo "== overhead per external call (go test -bench CallOverhead ./executors/codex/)" >&2
bench_out=$(cd "$REPO" && go test -run '^$' -bench CallOverhead -benchtime 300x -count 1 ./executors/codex/)
echo "$bench_out" >&2
metric() { awk -v unit="$1" '$1 ~ /^BenchmarkCallOverhead/ { for (i = 3; i <= NF; i++) if ($i == unit) print $(i - 1) }' <<<"$bench_out"; }
result "codex executor: overhead per call beyond the child's run" "$(metric overhead-ms/call)" ms "<=5"
result "codex executor: the fake child's own run" "$(metric child-ms/call)" ms -

# The fake codex of the research (bin-fast/codex): bash, no Node start-up.
mkdir -p "$WORK/bin"
cat >"$WORK/bin/codex" <<'SH'
#!/bin/bash
if [ "$1" = "--version" ]; then echo "codex-cli 0.145.0 (fast-fake)"; exit 0; fi
while IFS= read -r line; do last=$line; done
[ -n "$line" ] && last=$line
last=${last//\\/\\\\}; last=${last//\"/\\\"}; last=${last:0:80}
printf '{"type":"thread.started","thread_id":"fast-%s"}\n{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"ECHO: %s"}}\n{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":10}}\n' "$$" "$last"
SH
chmod +x "$WORK/bin/codex"
export PATH="$WORK/bin:$PATH"

# One workflow both runtimes accept.
cat >bench-par.workflow.js <<'JS'
export const meta = { name: "bench_par", description: "N agents in one parallel() fan-out" };
const n = args.n;
const out = await parallel(Array.from({ length: n }, (_, i) => () => agent(`parallel task ${i}`, { label: `p${i}` })));
return { n, ok: out.filter(Boolean).length };
JS

echo "== dynworkflow: $N agents, concurrency 16, fake codex" >&2
ours=$("$MEASURE" -n "$REPS" -label "dynworkflow-$N" -stdout "$WORK/ours.json" -- \
	"$DW" --state-dir "$STATE" run bench-par.workflow.js --json --executor codex --concurrency 16 \
	--max-agents "$N" --max-items "$N" --args "{\"n\":$N}")
echo "$ours"
if [[ $(json_field status "$WORK/ours.json") != completed || $(json_field live "$WORK/ours.json") != "$N" ]]; then
	echo "executors.sh: dynworkflow did not complete $N calls" >&2
	cat "$WORK/ours.json" >&2
	exit 1
fi

echo "== the Node peer: npm install @fish59fish/dynamic-workflows@0.1.0" >&2
peer_wall=? peer_rss=?
if command -v npm >/dev/null && (cd "$WORK" && mkdir -p peer && npm install --prefix peer --no-audit --no-fund --loglevel=error @fish59fish/dynamic-workflows@0.1.0 >&2); then
	PEER=$WORK/peer/node_modules/@fish59fish/dynamic-workflows/dist/standalone-cli.js
	theirs=$("$MEASURE" -n "$REPS" -label "peer-$N" -stdout "$WORK/peer.json" -- \
		node "$PEER" run bench-par.workflow.js --json --local --executor codex --concurrency 16 \
		--max-agents "$N" --state-dir "$WORK/peer-state" --args "{\"n\":$N}")
	echo "$theirs"
	grep -q "\"ok\": *$N" "$WORK/peer.json" || grep -q "\"ok\":$N" "$WORK/peer.json" ||
		echo "executors.sh: warning: the peer's output does not show $N answers" >&2
	peer_wall=$(field wall_median_ms "$theirs")
	peer_rss=$(field rss_max_mb "$theirs")
else
	echo "executors.sh: npm could not install the peer; its column is empty" >&2
fi

# The floor: the same children spawned with nothing around them. No
# runtime can beat it here, so it says how much of a wall-time ratio this
# machine allows at all: peer wall / floor wall.
echo "== the floor: $N bare spawns of the same fake codex, concurrency 16" >&2
(cd "$REPO" && go build -o "$WORK/spawnfloor" ./bench/cmd/spawnfloor)
floor_wall=$("$WORK/spawnfloor" -n "$N" -c 16 -- "$WORK/bin/codex" exec --json - | sed -n 's/^wall_ms=//p')

our_wall=$(field wall_median_ms "$ours")
our_rss=$(field rss_max_mb "$ours")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "?" }'; }
result "$N-agent parallel via fake codex: dynworkflow wall" "$(awk -v ms="$our_wall" 'BEGIN { printf "%.3f", ms / 1000 }')" s -
result "$N-agent parallel via fake codex: Node peer wall" "$(awk -v ms="$peer_wall" 'BEGIN { if (ms + 0 > 0) printf "%.3f", ms / 1000; else print "?" }')" s -
result "$N-agent parallel via fake codex: dynworkflow peak RSS" "$our_rss" MB "<25"
result "$N-agent parallel via fake codex: Node peer peak RSS" "$peer_rss" MB -
result "$N-agent parallel via fake codex: bare spawns, the floor" "$(awk -v ms="$floor_wall" 'BEGIN { printf "%.3f", ms / 1000 }')" s -
result "$N-agent parallel: dynworkflow over the floor" "$(ratio "$our_wall" "$floor_wall")" x "<=1.10"
result "$N-agent parallel: wall, peer over ours" "$(ratio "$peer_wall" "$our_wall")" x ">=3"
result "$N-agent parallel: wall, peer over the floor (the best ratio this machine allows)" "$(ratio "$peer_wall" "$floor_wall")" x -
result "$N-agent parallel: peak RSS, peer over ours" "$(ratio "$peer_rss" "$our_rss")" x ">=4"
