// Command fakecodex answers like the fake codex of bench/lib.sh, compiled:
// it reads the prompt on standard input and prints the three JSON lines
// of `codex exec --json` (thread started, the answer echoing the prompt's
// last line, usage). Starting it costs the exec of a static binary and no
// shell, so that a benchmark's floor is as low as a real agent's could be
// and the runtime's own cost per agent shows (FAKE=go in executors.sh).
//
//	fakecodex exec --json -   (the prompt on standard input)
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Println("codex-cli 0.145.0 (compiled fake)")
		return
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 16<<20)
	last := ""
	for in.Scan() {
		last = in.Text()
	}
	// Cut before escaping: cut after, an escape could lose its second half.
	if len(last) > 80 {
		last = last[:80]
	}
	last = strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(last)
	fmt.Printf(`{"type":"thread.started","thread_id":"fast-%d"}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"ECHO: %s"}}
{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":10}}
`, os.Getpid(), last)
}
