package e2etest

import (
	"os"
	"path/filepath"
	"testing"
)

// Gates hold agents until the test releases them: an agent of the command
// executor "gate" (flag, given to the process that runs the agents) whose
// prompt carries [gate:NAME] answers only once the test releases NAME. A
// test that needs a run still going holds it there instead of racing a
// simulated latency; a gate never released holds its agents until the
// run is paused, stopped or killed (or, as a last resort, five minutes).
type Gates struct {
	T    *testing.T
	Dir  string
	Flag string
}

// NewGates makes the gate executor's script; none is released yet.
func NewGates(t *testing.T) *Gates {
	t.Helper()
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent.sh")
	script := `prompt=$(cat)
case $prompt in
*"[gate:"*)
  name=${prompt#*\[gate:}
  name=${name%%]*}
  i=0
  while [ ! -e "` + dir + `/$name" ]; do
    i=$((i + 1))
    [ "$i" -lt 30000 ] || exit 1
    sleep 0.01
  done ;;
esac
echo "answer to $prompt"
`
	if err := os.WriteFile(agent, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return &Gates{T: t, Dir: dir, Flag: "--command-executor=gate=sh " + agent}
}

// Release lets the agents at gate name answer, now and from now on.
func (g *Gates) Release(name string) {
	g.T.Helper()
	if err := os.WriteFile(filepath.Join(g.Dir, name), nil, 0o644); err != nil {
		g.T.Fatal(err)
	}
}
