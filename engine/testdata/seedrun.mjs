// Runs workflow scripts on the Node runtime (the package whose directory is
// argv[2]) the way langtest.Env.Lockstep runs them on ours: one answer at a
// time, each once the script can do nothing more (the microtask queue is
// empty: setImmediate), picked from the calls waiting, oldest first, by the
// case's rule. Reads {cases: [{script, maxAgents, pick}]} on stdin and
// writes one line of JSON per case: the prompts of the calls the script
// made (from its log('call ' + prompt) lines, so those over the cap are
// there too), the prompts that reached the agent, and the result or the
// error's code.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const { runWorkflow } = await import(pathToFileURL(join(process.argv[2], "dist", "workflow.js")).href);

// pick is the index of the waiting call to answer at the step-th answer;
// the same rules as the Go test's.
const pick = (rule, step, n) => {
  switch (rule) {
    case "lifo": return n - 1;
    case "stride": return (step * 7 + 3) % n;
    default: return 0;
  }
};

const runCase = async ({ script, maxAgents, pick: rule }) => {
  const calls = [];
  const ran = [];
  const order = [];
  const waiting = [];
  let ended = false;
  let step = 0;
  let scheduled = false;
  const answerNext = () => {
    scheduled = false;
    if (waiting.length === 0) return;
    const [w] = waiting.splice(pick(rule, step++, waiting.length), 1);
    if (!ended) order.push(w.prompt);
    w.resolve("answer to " + w.prompt);
    schedule();
  };
  const schedule = () => {
    if (!scheduled) {
      scheduled = true;
      setImmediate(answerNext);
    }
  };
  const agent = {
    run(prompt) {
      ran.push(prompt);
      return new Promise((resolve) => {
        waiting.push({ prompt, resolve });
        schedule();
      });
    },
  };
  const onLog = (line) => {
    // Once an error has escaped the script the run is over; what branches
    // left running log while it drains is not part of it.
    if (line.startsWith("waiting for ")) ended = true;
    if (!ended && line.startsWith("call ")) calls.push(line.slice(5));
  };
  try {
    const out = await runWorkflow(script, {
      agent, maxAgents, concurrency: 100000, persistLogs: false, agentRegistry: new Map(), onLog, cwd: process.cwd(),
    });
    return { calls, ran, order, result: out.result };
  } catch (e) {
    return { calls, ran, order, error: e.code ?? String(e) };
  }
};

let input = "";
for await (const chunk of process.stdin) input += chunk;
for (const c of JSON.parse(input).cases) {
  process.stdout.write(JSON.stringify(await runCase(c)) + "\n");
}
