#!/usr/bin/env bash
# Forecast against actual: how far `dynworkflow plan`'s cost forecast is
# from what runs of the examples then cost, before any run of a workflow
# (the price table's default tokens per call) and after one (tokens learned
# from it, by call path, label pattern and phase).
#
#   bash bench/forecast.sh
#
# For each example, a first run with some args and a second with others
# (more items, another change, more rounds), each preceded by `plan` with
# the same args: the first plan forecasts from the default, the second
# from what the first run used. Printed per example and executor:
#
#   calls planned/ran · forecast $ vs actual $ and the error, twice.
#
# Executors: "agent", a command executor (bench/cmd/fakeagent) that
# answers like the simulator (schemas included) and reports the usage of a
# coding agent's call, growing with its prompt over 1 to 4 turns, priced as
# gpt-5.4; and, when they are on PATH, the real codex, claude and pi
# against the fake model server (`dynworkflow fake-model
# --usage-from-request`: usage follows each request's size), for the
# examples whose agents answer text (the fake model answers no schema).
# Figures are printed, never asserted.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
(cd "$REPO" && go build -o "$WORK/fakeagent" ./bench/cmd/fakeagent)

export XDG_CONFIG_HOME=$WORK/config
mkdir -p "$XDG_CONFIG_HOME/dynworkflow"
cat >"$XDG_CONFIG_HOME/dynworkflow/executors.json" <<JSON
{"commands": {"agent": "$WORK/fakeagent {schema_file}"}, "executors": {"agent": {"model": "gpt-5.4"}}}
JSON

executors=(agent)
CLI_BIN=${XDG_CACHE_HOME:-$HOME/.cache}/dynworkflow-ci/npm/node_modules/.bin
[[ -d $CLI_BIN ]] && export PATH="$CLI_BIN:$PATH"
clis=()
for pair in codex:codex claude:claude-code pi:pi; do
	command -v "${pair%%:*}" >/dev/null && clis+=("${pair#*:}")
done
if ((${#clis[@]} > 0)); then
	"$DW" fake-model --usage-from-request --write-config --dir "$WORK/clis" --cwd "$PROJECT" >"$WORK/fake-model.out" 2>&1 &
	FAKE=$!
	trap 'kill $FAKE 2>/dev/null; rm -rf "$WORK"' EXIT
	for _ in $(seq 100); do [[ -f $PROJECT/.dynworkflow/executors.json ]] && break; sleep 0.1; done
	executors+=("${clis[@]}")
else
	echo "codex, claude and pi are not on PATH: only the command executor runs (see README: Using real agents)" >&2
fi

# example: FILE ARGS1 ARGS2 TEXT (TEXT: its agents answer text, so the
# real CLIs on the fake model can run it).
examples=(
	"pipeline.workflow.js|{\"items\":5}|{\"items\":12}|text"
	"release-gate.workflow.js|{}|{}|text"
	"review.workflow.js|{\"change\":\"the login flow\"}|{\"change\":\"the billing module, its invoices and its refunds\"}|schema"
	"loop-until-dry.workflow.js|{\"maxRounds\":2}|{\"maxRounds\":4}|schema"
)

err() { awk -v f="$1" -v a="$2" 'BEGIN { if (a == 0) print "-"; else printf "%+.0f%%", (f - a) / a * 100 }'; }

printf '%-28s %-12s %-10s %-30s %-30s\n' EXAMPLE EXECUTOR CALLS "FIRST: DEFAULT FORECAST/ACTUAL" "SECOND: LEARNED FORECAST/ACTUAL"
for ex in "${examples[@]}"; do
	IFS='|' read -r file args1 args2 kind <<<"$ex"
	for exe in "${executors[@]}"; do
		[[ $exe != agent && $kind != text ]] && continue
		state=$WORK/state-$exe-$file
		row=()
		for i in 1 2; do
			args=$args1
			((i == 2)) && args=$args2
			"$DW" --state-dir "$state" plan "$REPO/examples/$file" --executor "$exe" --args "$args" --json >"$WORK/plan.json"
			f=$(json_field usd "$WORK/plan.json")
			planned=$(grep -o '"calls": [0-9][0-9]*' "$WORK/plan.json" | head -n 1 | grep -o '[0-9]*$' || echo "?")
			learned=$(json_field learnedFrom "$WORK/plan.json")
			"$DW" --state-dir "$state" run "$REPO/examples/$file" --executor "$exe" --args "$args" --json >"$WORK/out.json" 2>"$WORK/err.txt" || true
			a=$(json_field costUsd "$WORK/out.json")
			ran=$(json_field agents "$WORK/out.json")
			status=$(json_field status "$WORK/out.json")
			[[ $status == completed ]] || echo "$file on $exe, run $i: $status $(tail -n 3 "$WORK/err.txt")" >&2
			row+=("$planned/$ran" "$(printf '$%.4f/$%.4f %s (learned: %s)' "$f" "${a:-0}" "$(err "$f" "${a:-0}")" "$learned")")
		done
		printf '%-28s %-12s %-10s %-30s %-30s\n' "$file" "$exe" "${row[0]},${row[2]}" "${row[1]}" "${row[3]}"
	done
done
