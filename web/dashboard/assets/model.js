// The selected run as the page knows it: the detail of GET /api/runs/<id>,
// kept current by events until the next fetch replaces it. Applying an
// event is idempotent enough to be done twice: the page re-applies the
// events that arrived while a fetch was in flight.

import { comparePaths } from "./format.js";
import { applySpend } from "./steer.js";

const terminal = new Set(["done", "failed"]);
const liveHistoryLimit = 200;
const logLimit = 5000;

export class RunModel {
  constructor(detail) {
    this.load(detail);
  }

  // load replaces everything with a fetched detail.
  load(detail) {
    this.detail = detail;
    this.summary = detail.summary || {};
    this.epoch = this.summary.epoch || 0;
    this.logs = (detail.logs || []).slice(-logLimit);
    this.calls = new Map();
    for (const c of detail.calls || []) this.calls.set(c.path, c);
    // The errors the script threw in branches that became null, by cause.
    this.scriptErrors = (detail.scriptErrors || []).map((g) => ({ ...g }));
    this.regroup();
  }

  // scriptErrorCount is how many branches the script's errors made null
  // in the latest execution.
  scriptErrorCount() {
    return this.scriptErrors.reduce((n, g) => n + (g.count || 0), 0);
  }

  get id() {
    return this.summary.runId;
  }

  // declaredPhases are the phase titles of the script's meta.
  get declaredPhases() {
    return this.summary.phases || (this.detail.script && this.detail.script.phases) || [];
  }

  // regroup sorts the calls into their phases: the declared phases first,
  // in order, then any other in order of first appearance.
  regroup() {
    const byTitle = new Map();
    for (const t of this.declaredPhases) byTitle.set(t, { title: t, declared: true, calls: [] });
    const sorted = [...this.calls.values()].sort((a, b) => comparePaths(a.path, b.path));
    for (const c of sorted) {
      const t = c.phase || "";
      let g = byTitle.get(t);
      if (!g) {
        g = { title: t, declared: false, calls: [] };
        byTitle.set(t, g);
      }
      g.calls.push(c);
    }
    this.groups = [...byTitle.values()].filter((g) => g.declared || g.calls.length);
    for (const g of this.groups) countGroup(g);
  }

  group(title) {
    return this.groups.find((g) => g.title === title);
  }

  // counts are the run's calls by state.
  counts() {
    const n = { agents: 0, running: 0, done: 0, failed: 0, replayed: 0, checkpoints: 0 };
    for (const g of this.groups) {
      n.agents += g.counts.agents;
      n.running += g.counts.running;
      n.done += g.counts.done;
      n.failed += g.counts.failed;
      n.replayed += g.counts.replayed;
      n.checkpoints += g.counts.checkpoints;
    }
    return n;
  }

  // apply folds one event in, and says what it changed: calls (the
  // paths), groups (true when calls moved between or into groups), run
  // (the summary), logs, and stale (the event lacks data the page shows,
  // so the detail should be fetched again).
  apply(ev, ch) {
    const p = ev.payload || {};
    const at = ev.timestamp;
    switch (ev.type) {
      case "run.started":
      case "run.resumed":
        this.summary.status = "running";
        this.summary.pauseReason = "";
        this.summary.resumeAt = undefined;
        this.summary.error = "";
        this.summary.endedAt = undefined;
        this.scriptErrors = [];
        if (typeof p.epoch === "number") this.epoch = this.summary.epoch = p.epoch;
        ch.run = true;
        ch.stale = true;
        return;
      case "run.status":
        this.summary.status = p.status;
        this.summary.pauseReason = p.pauseReason || "";
        this.summary.resumeAt = p.resumeAt;
        this.summary.error = p.error || "";
        if (p.status !== "running") this.summary.endedAt = at;
        if (p.scriptErrors) this.scriptErrors = p.scriptErrors.map((g) => ({ ...g }));
        ch.run = true;
        ch.stale = true;
        return;
      case "call.started": {
        const c = this.call(p.path, "agent", ch);
        if (terminal.has(c.status) && c.epoch === this.epoch) return; // an old event replayed after a fetch
        Object.assign(c, { status: "running", epoch: this.epoch, startedAt: at, endedAt: undefined, error: "", durMs: undefined, retries: [] });
        c.activity = { path: c.path, activity: { kind: "started", at }, since: at };
        delete c.result;
        this.meta(c, p, ch);
        if (!c.prompt) ch.stale = true;
        ch.calls.add(c.path);
        return;
      }
      case "call.finished":
      case "call.failed":
      case "call.replayed": {
        const c = this.call(p.path, "agent", ch);
        c.status = ev.type === "call.failed" ? "failed" : "done";
        c.epoch = this.epoch;
        // A replayed call keeps the times it ran at, when the page knows
        // them: the timeline draws it where it ran.
        if (ev.type !== "call.replayed" || !c.endedAt) c.endedAt = at;
        c.source = ev.type === "call.replayed" ? "journal" : "live";
        if (ev.type === "call.failed") {
          c.error = p.error || c.error || "failed";
          delete c.result;
        }
        delete c.activity;
        if (p.usage) c.usage = p.usage;
        if (c.startedAt && ev.type !== "call.replayed") c.durMs = Date.parse(at) - Date.parse(c.startedAt);
        if (p.result !== undefined || p.resultPreview !== undefined) c.resultPreview = p.result !== undefined ? p.result : p.resultPreview;
        this.meta(c, p, ch);
        ch.calls.add(c.path);
        ch.finished.add(c.path);
        return;
      }
      case "call.retry": {
        const c = this.call(p.path, "agent", ch);
        if (p.attempt) c.attempts = p.attempt + 1;
        c.retryError = p.error || "";
        c.retries = (c.retries || []).concat({ at, class: p.class || "" });
        ch.calls.add(c.path);
        return;
      }
      case "call.progress": {
        const c = this.call(p.path, "agent", ch);
        const pr = p.progress || {};
        if (pr.history) {
          c.liveHistory = c.liveHistory || [];
          c.liveHistory.push(pr.history);
          if (c.liveHistory.length > liveHistoryLimit) c.liveHistory.splice(0, c.liveHistory.length - liveHistoryLimit);
        }
        if (pr.usage) c.usage = pr.usage;
        if (pr.activity) noteActivity(c, pr.activity);
        ch.calls.add(c.path);
        ch.progress.add(c.path);
        return;
      }
      case "checkpoint.answered": {
        const c = this.call(p.path, "checkpoint", ch);
        const keep = p.source === "journal" && c.endedAt;
        Object.assign(c, { status: "done", epoch: this.epoch, endedAt: keep ? c.endedAt : at, result: p.answer, source: p.source === "journal" ? "journal" : "live" });
        if (p.waitedMs) c.durMs = p.waitedMs;
        if (p.prompt) c.prompt = p.prompt;
        ch.calls.add(c.path);
        return;
      }
      case "phase":
        // As the engine does: the run's phase is the last one begun, in
        // whatever scope (a phase an agent() call names begins in its
        // branch).
        this.summary.phase = p.title;
        this.log({ time: at, scope: p.scope, level: "phase", message: p.title }, ch);
        ch.run = true;
        return;
      case "log":
        this.log({ time: at, scope: p.scope, level: p.level || "info", message: p.message }, ch);
        return;
      case "limit":
        this.log({ time: at, level: "limit", message: p.message || p.limit }, ch);
        return;
      case "branch.failed":
        // The warning line comes as its own log event.
        addScriptError(this.scriptErrors, p);
        ch.run = true;
        return;
      case "run.spend":
        applySpend(this.summary, p);
        ch.run = true;
        return;
      case "call.control":
        return; // the call's own events follow
      default:
        ch.stale = true;
    }
  }

  // call finds or adds the call at path. A new call is put in its place
  // in path order, so a fetch later does not move it.
  call(path, kind, ch) {
    let c = this.calls.get(path);
    if (!c) {
      c = { path, kind, status: "running", epoch: this.epoch };
      this.calls.set(path, c);
      ch.groups = true;
    }
    return c;
  }

  // meta copies what a call event tells about the call. A phase change
  // moves the call to another group.
  meta(c, p, ch) {
    if (p.label) c.label = p.label;
    if (p.executor) c.executor = p.executor;
    if (p.model) c.model = p.model;
    // An event's prompt may be cut short: it stands in until a fetch
    // brings the whole one.
    const prompt = p.prompt || p.promptPreview;
    if (prompt && !c.prompt) c.promptPreview = prompt;
    if (p.phase !== undefined && p.phase !== c.phase) {
      c.phase = p.phase;
      ch.groups = true;
    }
  }

  log(line, ch) {
    this.logs.push(line);
    if (this.logs.length > logLimit) this.logs.splice(0, this.logs.length - logLimit);
    ch.logs = true;
  }
}

// stalledKinds are activities that are not progress: the CLI retrying,
// erring, or unable to reach its endpoint (as executors.Activity.Stalled).
const stalledKinds = new Set(["retry", "error", "unreachable"]);

// noteActivity records a running call's latest activity, as the run's
// detail gives it: what and when, and since when it made progress.
function noteActivity(c, a) {
  const prev = c.activity || { path: c.path, since: c.startedAt };
  c.activity = { ...prev, activity: a, since: stalledKinds.has(a.kind) ? prev.since : a.at };
}

export function isStalled(a) {
  return !!a && stalledKinds.has(a.kind);
}

// newChanges is an empty change set for RunModel.apply.
export function newChanges() {
  return { calls: new Set(), finished: new Set(), progress: new Set(), groups: false, run: false, logs: false, stale: false };
}

export function countGroup(g) {
  const n = { agents: 0, running: 0, done: 0, failed: 0, replayed: 0, checkpoints: 0 };
  for (const c of g.calls) {
    if (c.kind === "checkpoint") {
      n.checkpoints++;
      continue;
    }
    n.agents++;
    if (c.status === "running") n.running++;
    else if (c.status === "failed") n.failed++;
    else if (c.status === "done") {
      n.done++;
      if (c.source === "journal") n.replayed++;
    }
  }
  g.counts = n;
}

// addScriptError counts one script error (a branch.failed payload) in
// groups, by message and position, as the server groups them.
export function addScriptError(groups, e) {
  let g = groups.find((x) => x.message === e.message && (x.position || "") === (e.position || ""));
  if (!g) groups.push((g = { message: e.message || "", position: e.position || "", count: 0, firstPath: e.path }));
  g.count++;
  if (e.path && comparePaths(e.path, g.firstPath) < 0) g.firstPath = e.path;
}

// failureGroups groups the failed calls by their error, most common first.
export function failureGroups(calls) {
  const by = new Map();
  for (const c of calls) {
    if (c.status !== "failed") continue;
    const cause = (c.error || "failed").split("\n")[0];
    let g = by.get(cause);
    if (!g) by.set(cause, (g = { cause, calls: [] }));
    g.calls.push(c);
  }
  return [...by.values()].sort((a, b) => b.calls.length - a.calls.length);
}

// callDuration is how long a call took, or has been running.
export function callDuration(c) {
  if (c.durMs) return c.durMs;
  const start = Date.parse(c.startedAt);
  if (!start) return c.durMs;
  if (c.status === "running") return Date.now() - start;
  const end = Date.parse(c.endedAt);
  return end ? Math.max(0, end - start) : c.durMs;
}
