#!/usr/bin/env bash
# The runtime server (dynworkflow serve). Targets: GET /api/overview with
# 1,000 runs on disk answers with p99 under 10 ms at 200 requests/s; 200
# SSE clients attached to a 1,000-agent run lose no event, and the server's
# RSS grows by under 50 KB per client.
#
#   bash bench/server.sh [RUNS=1000] [RATE=200] [SECONDS=10] [CLIENTS=200] [AGENTS=1000]
#
# Creates the runs in process (bench/cmd/serverbench populate), starts
# `dynworkflow serve` on them, and measures it from another process.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUNS=${1:-1000}
RATE=${2:-200}
SECONDS_=${3:-10}
CLIENTS=${4:-200}
AGENTS=${5:-1000}
bench_init
(cd "$REPO" && go build -o "$WORK/serverbench" ./bench/cmd/serverbench)
SB=$WORK/serverbench

echo "creating $RUNS runs..." >&2
"$SB" populate -state "$STATE" -project "$PROJECT" -runs "$RUNS" >&2
"$DW" serve --cwd "$PROJECT" --state-dir "$STATE" >"$WORK/serve.out" 2>"$WORK/serve.err" &
SERVE=$!
trap 'kill -INT $SERVE 2>/dev/null; wait $SERVE 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 1 200); do
	grep -q '^dashboard: ' "$WORK/serve.out" 2>/dev/null && break
	sleep 0.05
done
DESC=$(find "$STATE/projects" -name runtime.json | head -1)
[[ -n $DESC ]] || { echo "server.sh: serve did not start" >&2; cat "$WORK/serve.err" >&2; exit 1; }

"$SB" overview -descriptor "$DESC" -rate "$RATE" -duration "${SECONDS_}s"
"$SB" sse -descriptor "$DESC" -clients "$CLIENTS" -agents "$AGENTS"
