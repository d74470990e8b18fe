// Generates expected.json: what Node answers for each expression of
// cases.json, the table jsvm's dialect test holds our VM to. Run it from
// this directory after editing cases.json:
//
//   TZ=UTC LANG=C node gen.mjs > expected.json
//
// Each expression is evaluated as a function body's return value; a throw
// is recorded as {"error": "<the error's name>"}.
import { readFileSync } from "node:fs";

const cases = JSON.parse(readFileSync(new URL("./cases.json", import.meta.url), "utf8"));
const out = {};
for (const c of cases) {
  try {
    out[c.name] = { value: String(new Function("return (" + c.expr + ")")()) };
  } catch (e) {
    out[c.name] = { error: e.name };
  }
}
process.stdout.write(JSON.stringify({ node: process.version, icu: process.versions.icu, cases: out }, null, 1) + "\n");
