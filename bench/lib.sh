# Shared by the bench/*.sh scripts; source it, do not run it.
#
# bench_init makes a temporary directory (removed on exit) and the two
# binaries the scripts need: $DW, the dynworkflow CLI, and $MEASURE, the
# helper that times a command (bench/cmd/measure). run.sh builds them once
# and passes them down in DYNWORKFLOW_BIN and MEASURE_BIN.

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
		(cd "$REPO" && go build -o "$WORK/dynworkflow" ./cmd/dynworkflow && go build -o "$WORK/measure" ./bench/cmd/measure)
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

# write_fake_codex DIR: DIR/codex, the fake codex of the research
# (bin-fast/codex): bash, no Node start-up, one answer per prompt.
write_fake_codex() {
	mkdir -p "$1"
	cat >"$1/codex" <<'SH'
#!/bin/bash
if [ "$1" = "--version" ]; then echo "codex-cli 0.145.0 (fast-fake)"; exit 0; fi
while IFS= read -r line; do last=$line; done
[ -n "$line" ] && last=$line
last=${last//\\/\\\\}; last=${last//\"/\\\"}; last=${last:0:80}
printf '{"type":"thread.started","thread_id":"fast-%s"}\n{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"ECHO: %s"}}\n{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":10}}\n' "$$" "$last"
SH
	chmod +x "$1/codex"
}
