# Shared by the bench/*.sh scripts; source it, do not run it.
#
# bench_init makes a temporary directory (removed on exit) and the two
# binaries the scripts need: $DW, the dynworkflow CLI, and $MEASURE, the
# helper that times a command (bench/cmd/measure). run.sh builds them once
# and passes them down in DYNWORKFLOW_BIN and MEASURE_BIN. dynworkflow is
# built as the README's Install says: static (CGO_ENABLED=0).

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)

bench_init() {
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/dynworkflow-bench.XXXXXX")
	trap 'rm -rf "$WORK"' EXIT
	trap 'exit 130' INT TERM
	DW=${DYNWORKFLOW_BIN:-}
	MEASURE=${MEASURE_BIN:-}
	if [[ -z $DW || -z $MEASURE ]]; then
		echo "building dynworkflow and the measure helper..." >&2
		(cd "$REPO" && CGO_ENABLED=0 go build -o "$WORK/dynworkflow" ./cmd/dynworkflow && go build -o "$WORK/measure" ./bench/cmd/measure)
		DW=$WORK/dynworkflow
		MEASURE=$WORK/measure
	fi
	# The project the runs belong to, and a private state directory.
	PROJECT=$WORK/project
	STATE=$WORK/state
	mkdir -p "$PROJECT"
	cd "$PROJECT"
}

# write_fanout FILE: a workflow of one parallel() of args.n thunks, each
# one agent call. It returns how many calls answered, so that the result
# (journaled and kept in the snapshot) does not grow with n.
write_fanout() {
	cat >"$1" <<'JS'
export const meta = { name: 'bench-fanout', description: 'args.n agent calls in one parallel()' }
const results = await parallel(Array.from({ length: args.n }, (_, i) => () => agent(`task ${i}`)))
const answered = results.filter(r => r !== null).length
if (answered !== args.n) throw new Error('only ' + answered + ' of ' + args.n + ' calls answered')
return answered
JS
}

# dw ARGS...: the CLI on the private state directory.
dw() { "$DW" --state-dir "$STATE" "$@"; }

# field NAME LINE: the value of NAME=value in a line of measure's output.
field() {
	local kv
	for kv in $2; do
		if [[ $kv == "$1="* ]]; then
			echo "${kv#*=}"
			return
		fi
	done
	echo "?"
}

# json_field NAME FILE: the first "NAME": value of an indented JSON file,
# without its quotes and trailing comma (enough for the CLI's --json).
json_field() {
	sed -n "s/^ *\"$1\": *\"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$2" | head -n 1
}

# result NAME VALUE UNIT GOAL: one row of run.sh's summary table, also
# readable on its own. GOAL is "<X" or "<=X" (informational: timings are
# printed, never asserted) or "-" for none.
result() {
	local verdict=-
	[[ $2 =~ ^-?[0-9.]+$ ]] || set -- "$1" "?" "$3" "$4" # a figure that could not be read
	case $4 in
	"<="*) [[ $2 == "?" ]] && verdict="?" || verdict=$(awk -v v="$2" -v g="${4#<=}" 'BEGIN { print (v + 0 <= g + 0) ? "meets" : "MISSES" }') ;;
	"<"*) [[ $2 == "?" ]] && verdict="?" || verdict=$(awk -v v="$2" -v g="${4#<}" 'BEGIN { print (v + 0 < g + 0) ? "meets" : "MISSES" }') ;;
	esac
	printf 'RESULT\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$verdict"
}

# write_fake_codex DIR: DIR/codex, a fake codex that answers each prompt
# at once: a static Go binary (bench/cmd/fakecodex), as issue 26 measured,
# with no shell to start, so that the floor is low and the runtime's own
# cost per agent a large share of the wall. FAKE=bash writes the fake of
# the research instead (bin-fast/codex): the same answers from bash.
write_fake_codex() {
	mkdir -p "$1"
	if [[ ${FAKE:-go} == go ]]; then
		(cd "$REPO" && CGO_ENABLED=0 go build -o "$1/codex" ./bench/cmd/fakecodex)
		return
	fi
	cat >"$1/codex" <<'SH'
#!/bin/bash
if [ "$1" = "--version" ]; then echo "codex-cli 0.145.0 (fast-fake)"; exit 0; fi
while IFS= read -r line; do last=$line; done
[ -n "$line" ] && last=$line
last=${last:0:80}; last=${last//\\/\\\\}; last=${last//\"/\\\"}
printf '{"type":"thread.started","thread_id":"fast-%s"}\n{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"ECHO: %s"}}\n{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":10}}\n' "$$" "$last"
SH
	chmod +x "$1/codex"
}

# temporal_init builds the companion dynworkflow-temporal (the build with
# the Temporal client, which $DW hands its Temporal commands to, found on
# PATH) and the Temporal dev server the tests use (internal/temporaldev,
# cached under ~/.cache/dynworkflow-ci; a cold build takes minutes), and
# starts the server for as long as the script runs: ADDRESS, NAMESPACE and
# DEV_PID say where it is. Worker processes the script starts go in PIDS,
# which cleanup stops.
temporal_init() {
	(cd "$REPO" && go build -tags temporal -o "$WORK/dynworkflow-temporal" ./cmd/dynworkflow)
	export PATH="$WORK:$PATH"
	local dev
	dev=$(cd "$REPO" && go run ./internal/temporaltest/prebuild)
	# The dev server lives until this script ends: its stdin is a pipe we hold.
	mkfifo "$WORK/dev.in"
	"$dev" <"$WORK/dev.in" >"$WORK/dev.json" 2>"$WORK/dev.err" &
	DEV_PID=$!
	exec 3>"$WORK/dev.in"
	PIDS=()
	trap temporal_cleanup EXIT
	for _ in $(seq 100); do [[ -s $WORK/dev.json ]] && break; sleep 0.1; done
	ADDRESS=$(sed -n 's/.*"address":"\([^"]*\)".*/\1/p' "$WORK/dev.json")
	NAMESPACE=$(sed -n 's/.*"namespace":"\([^"]*\)".*/\1/p' "$WORK/dev.json")
	[[ -n $ADDRESS ]] || { echo "the Temporal dev server did not start:" >&2; cat "$WORK/dev.err" >&2; exit 1; }
	echo "Temporal dev server at $ADDRESS (namespace $NAMESPACE), pid $DEV_PID"
}

temporal_cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	exec 3>&- || true
	wait 2>/dev/null || true
	rm -rf "$WORK"
}

# start_workers N QUEUE ARGS...: N `dynworkflow worker` processes on task
# queue QUEUE, with ARGS, added to PIDS; it returns once they all poll.
start_workers() {
	local n=$1 queue=$2 i
	shift 2
	for i in $(seq "$n"); do
		"$DW" --state-dir "$STATE" worker --temporal-address "$ADDRESS" --temporal-namespace "$NAMESPACE" \
			--task-queue "$queue" "$@" 2>"$WORK/worker-$queue-$i.log" &
		PIDS+=($!)
	done
	for i in $(seq "$n"); do
		for _ in $(seq 300); do grep -q "polling task queue" "$WORK/worker-$queue-$i.log" && break; sleep 0.1; done
	done
}

# stop_workers: stops the workers in PIDS.
stop_workers() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait "${PIDS[@]}" 2>/dev/null || true
	PIDS=()
}

# cpu_ms PID...: the CPU time (user + system) the processes used so far.
cpu_ms() {
	local total=0 p t
	for p in $(with_descendants "$@"); do
		t=$(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)
		total=$((total + t))
	done
	echo $((total * 1000 / $(getconf CLK_TCK)))
}

# with_descendants PID...: the processes and all their descendants (a
# worker's runtime is the child of its ancestor process).
with_descendants() {
	local p
	for p in "$@"; do
		echo "$p"
		# shellcheck disable=SC2046
		with_descendants $(pgrep -P "$p" 2>/dev/null || true)
	done
}
