// The run list: every run of the project with its state, newest first,
// and the questions runs are waiting on.

import { h, setText } from "./dom.js";
import { count, duration, statusClass, time } from "./format.js";
import { checkpointForm } from "./checkpoints.js";
import { spend } from "./steer.js";

export class RunList {
  constructor(app) {
    this.app = app;
    this.rows = new Map();
    this.filter = "";
    this.cpBox = h("div", { class: "cp-list" });
    this.cpSection = h("section", { class: "waiting", "aria-labelledby": "waiting-title", hidden: true },
      h("h2", { id: "waiting-title" }, "Waiting for you"), this.cpBox);
    const search = h("input", {
      type: "search", placeholder: "Filter by name, id or status", "aria-label": "Filter runs",
      on: { input: (e) => { this.filter = e.target.value.trim().toLowerCase(); this.render(); } },
    });
    this.count = h("span", { class: "muted" });
    this.body = h("div", { class: "run-rows" });
    this.empty = h("p", { class: "empty", hidden: true });
    this.el = h("div", { class: "view-list" },
      this.cpSection,
      h("section", { "aria-labelledby": "runs-title" },
        h("div", { class: "list-head" }, h("h1", { id: "runs-title" }, "Runs"), this.count, search),
        h("div", { class: "run-table" },
          h("div", { class: "run-row run-header", "aria-hidden": "true" },
            ["Status", "Workflow", "Phase", "Agents", "Tokens · cost", "Elapsed"].map((t) => h("span", null, t))),
          this.body),
        this.empty));
  }

  render() {
    const ov = this.app.overview;
    if (!ov) return;
    const runs = ov.runs || [];
    const shown = this.filter ? runs.filter((r) => (r.name + " " + r.runId + " " + r.status).toLowerCase().includes(this.filter)) : runs;
    setText(this.count, runs.length === shown.length ? runs.length + (runs.length === 1 ? " run" : " runs") : shown.length + " of " + runs.length);
    const waiting = new Map();
    for (const cp of this.app.checkpoints()) waiting.set(cp.runId, (waiting.get(cp.runId) || 0) + 1);
    const keep = new Set();
    let prev = null;
    for (const r of shown) {
      keep.add(r.runId);
      let row = this.rows.get(r.runId);
      if (!row) {
        row = h("a", { class: "run-row", dataset: { run: r.runId } });
        this.rows.set(r.runId, row);
      }
      fillRow(row, r, waiting.get(r.runId) || 0);
      const want = prev ? prev.nextSibling : this.body.firstChild;
      if (want !== row) this.body.insertBefore(row, want);
      prev = row;
    }
    for (const [id, row] of this.rows) {
      if (!keep.has(id)) {
        row.remove();
        this.rows.delete(id);
      }
    }
    this.empty.hidden = shown.length > 0;
    setText(this.empty, runs.length ? "No run matches the filter." : "No runs yet. Start one with: dynworkflow run FILE");
    this.renderCheckpoints();
  }

  renderCheckpoints() {
    const cps = this.app.checkpoints();
    this.cpSection.hidden = cps.length === 0;
    syncForms(this.cpBox, cps, (cp) => checkpointForm(cp, { api: this.app.api, onGone: (c, how) => this.app.checkpointGone(c, how), withRun: true }));
  }

  // tick updates the elapsed time of running runs.
  tick() {
    for (const r of (this.app.overview && this.app.overview.runs) || []) {
      if (r.status !== "running") continue;
      const row = this.rows.get(r.runId);
      if (row) setText(row.querySelector(".c-elapsed b"), elapsed(r));
    }
  }
}

// syncForms keeps one form per checkpoint in box, in order, leaving the
// forms of checkpoints still pending as they are (a half-typed answer
// stays).
export function syncForms(box, cps, make) {
  const have = new Map();
  for (const el of box.children) have.set(el.dataset.checkpoint, el);
  const want = new Set(cps.map((c) => c.id));
  for (const [id, el] of have) if (!want.has(id)) el.remove();
  let prev = null;
  for (const cp of cps) {
    let el = have.get(cp.id);
    if (!el) el = make(cp);
    const at = prev ? prev.nextSibling : box.firstChild;
    if (at !== el) box.insertBefore(el, at);
    prev = el;
  }
}

export function elapsed(r) {
  const start = Date.parse(r.startedAt);
  if (!start) return "";
  const end = r.endedAt ? Date.parse(r.endedAt) : r.status === "running" ? Date.now() : Date.parse(r.updatedAt) || Date.now();
  return duration(Math.max(0, end - start));
}

// phaseProgress is "title · n/m" for a run whose meta declares phases.
export function phaseProgress(r) {
  const phases = r.phases || [];
  const i = r.phase ? phases.indexOf(r.phase) : -1;
  if (i >= 0) return { text: r.phase, step: i + 1, of: phases.length };
  if (r.status === "completed" && phases.length) return { text: "all phases", step: phases.length, of: phases.length };
  return { text: r.phase || "", step: 0, of: phases.length };
}

// statusText is the run's status as its badge says it: a run parked
// until its executor's quota resets says so.
export function statusText(r) {
  if (r.status === "paused" && r.resumeAt) return "waiting for quota";
  return r.status || "unknown";
}

function fillRow(row, r, questions) {
  row.href = "#run=" + encodeURIComponent(r.runId);
  const s = r.stats || {};
  const pp = phaseProgress(r);
  const bar = pp.of ? h("progress", { max: String(pp.of), value: String(pp.step), "aria-label": "phase " + pp.step + " of " + pp.of }) : null;
  const reason = r.status === "paused" && r.pauseReason ? r.pauseReason : r.status === "failed" && r.error ? r.error : "";
  row.replaceChildren(
    h("span", { class: "c-status" }, h("span", { class: ["badge", statusClass(r.status)] }, statusText(r)),
      s.scriptErrors ? h("span", {
        class: "badge script-errors", dataset: { note: "script-errors" },
        title: "The script threw in parallel() or pipeline() branches, which became null: the result lacks their work.",
      }, s.scriptErrors + (s.scriptErrors === 1 ? " script error" : " script errors")) : null,
      reason ? h("span", { class: "reason", title: reason }, reason) : null),
    h("span", { class: "c-name" }, h("b", null, r.name || "(unnamed)"), h("small", null, r.runId)),
    h("span", { class: "c-phase" }, pp.text ? h("span", null, pp.text + (pp.of ? " · " + pp.step + "/" + pp.of : "")) : h("span", { class: "muted" }, "—"), bar),
    h("span", { class: "c-agents" },
      questions ? h("span", { class: "n-waiting" }, questions + (questions === 1 ? " question" : " questions")) : null,
      s.running ? h("span", { class: "n-running" }, s.running + " running") : null,
      h("span", { class: "n-done" }, (s.agents - (s.failed || 0) || 0) + " done"),
      s.failed ? h("span", { class: "n-failed" }, s.failed + " failed") : null,
      s.replayed ? h("span", { class: "muted" }, s.replayed + " replayed") : null),
    h("span", { class: "c-tokens" }, count((s.inputTokens || 0) + (s.outputTokens || 0)) + " tok", spend(r) ? h("span", null, " · " + spend(r)) : null),
    h("span", { class: "c-elapsed" }, h("b", null, elapsed(r)), h("small", null, time(r.startedAt))));
}
