// The run view: the run's state and actions, its questions, its phases
// with their agents (windowed, so a 1,000-agent run stays light), the
// panel of the selected agent, the failures grouped by cause, the log,
// the result and the script.

import { h, setText, replace } from "./dom.js";
import { count, duration, pretty, statusClass, time } from "./format.js";
import { VirtualList } from "./vlist.js";
import { agentPanel, callStatus } from "./agentpanel.js";
import { checkpointForm } from "./checkpoints.js";
import { syncForms, elapsed, phaseProgress, statusText } from "./runlist.js";
import { callDuration, countGroup, failureGroups } from "./model.js";
import { Timeline } from "./timeline.js";
import { agentActions, spend } from "./steer.js";

// The parts of a run's detail this view shows in their place; any other
// (a newer server's) is listed, folded, at the end.
const knownDetail = new Set(["summary", "script", "args", "options", "result", "calls", "logs", "executions", "children",
  "executors", "simulatedAnswers", "failures", "scriptErrors", "worktrees", "damaged", "tornBytes"]);
const logShown = 1000;

// Which actions a run in each state offers; the server still decides.
const actionsFor = {
  running: ["pause", "stop"],
  waiting: ["pause", "stop"],
  paused: ["resume", "stop", "delete"],
  failed: ["resume", "delete"],
  completed: ["delete"],
  stopped: ["delete"],
};
const actionLabels = { pause: "Pause", resume: "Resume", stop: "Stop", delete: "Delete" };
const actionBusy = { pause: "Pausing…", resume: "Resuming…", stop: "Stopping…", delete: "Deleting…" };

export class RunView {
  constructor(app, model) {
    this.app = app;
    this.model = model;
    this.lists = new Map(); // phase title -> its section, list, head parts and group
    this.busy = "";
    this.ticks = 0;
    this.build();
    this.load(model);
  }

  build() {
    this.title = h("h1", { id: "run-title" });
    this.idEl = h("code", { class: "run-id" });
    this.badge = h("span", { class: "badge" });
    this.reason = h("span", { class: "reason" });
    this.sim = h("span", {
      class: "badge sim", dataset: { note: "simulated" }, hidden: true,
      title: "No executor was chosen, so the built-in simulator answered every call: no agent ran. " +
        "Pick one with --executor codex, claude-code or pi, or defaultExecutor in .dynworkflow/executors.json.",
    }, "simulated answers");
    this.scriptBadge = h("span", {
      class: "badge script-errors", dataset: { note: "script-errors" }, hidden: true,
      title: "The script threw in parallel() or pipeline() branches, which became null: the result lacks their work. " +
        "The errors are listed below; --strict (or meta.strict) fails a run at the first.",
    });
    this.actions = h("div", { class: "actions", role: "group", "aria-label": "Run actions" });
    this.desc = h("p", { class: "desc" });
    this.notes = h("div", { class: "run-notes" });
    this.timeline = new Timeline({ onSelect: (path) => this.app.selectCall(path) });
    this.stats = h("dl", { class: "stats" });
    this.cpBox = h("div", { class: "cp-list" });
    this.cpSection = h("section", { class: "waiting", "aria-label": "Questions of this run", hidden: true },
      h("h2", null, "Waiting for you"), this.cpBox);
    this.failBox = h("section", { class: "failures", "aria-labelledby": "failures-title", hidden: true });
    this.phases = h("div", { class: "phases" });
    this.panel = h("aside", { class: "panel-slot", "aria-label": "Agent" });
    this.result = h("section", { class: "result", "aria-labelledby": "result-title" });
    this.logList = h("ol", { class: "log" });
    this.logNote = h("p", { class: "muted" });
    this.script = h("details", { class: "script" });
    this.extra = h("div", { class: "extra" });
    this.el = h("div", { class: "view-run" },
      h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, h("a", { href: "#" }, "← Runs")),
      h("header", { class: "run-head" },
        h("div", { class: "run-title" }, this.title, h("div", { class: "run-sub" }, this.badge, this.scriptBadge, this.sim, this.idEl, this.reason)),
        this.actions),
      this.cpSection,
      this.desc,
      this.notes,
      this.stats,
      this.failBox,
      h("div", { class: "run-body" },
        h("section", { class: "phases-wrap", "aria-labelledby": "phases-title" },
          h("div", { class: "phases-head" }, h("h2", { id: "phases-title" }, "Agents"), this.viewSwitch()),
          this.phases, this.timeline.el),
        this.panel),
      this.result,
      h("section", { class: "log-wrap", "aria-labelledby": "log-title" }, h("h2", { id: "log-title" }, "Log"), this.logNote, this.logList),
      this.script,
      this.extra);
  }

  // viewSwitch shows the agents as a list (by phase, windowed) or as a
  // timeline; the choice holds for the tab's other runs.
  viewSwitch() {
    const choice = (name, label) => h("button", {
      type: "button", class: "btn seg", dataset: { show: name }, "aria-pressed": "false",
      on: { click: () => this.showAs(name) },
    }, label);
    this.switchEl = h("div", { class: "view-switch", role: "group", "aria-label": "Show the agents as" },
      choice("list", "List"), choice("timeline", "Timeline"));
    let shown = "list";
    try {
      shown = sessionStorage.getItem("dynworkflow.agents-view") || "list";
    } catch {
      // storage refused: the list it is
    }
    this.showAs(shown, true);
    return this.switchEl;
  }

  showAs(name, quiet) {
    this.shown = name === "timeline" ? "timeline" : "list";
    for (const b of this.switchEl.children) b.setAttribute("aria-pressed", String(b.dataset.show === this.shown));
    this.phases.hidden = this.shown !== "list";
    this.timeline.setVisible(this.shown === "timeline");
    if (quiet) return;
    try {
      sessionStorage.setItem("dynworkflow.agents-view", this.shown);
    } catch {
      // not kept
    }
    if (this.shown === "list") for (const [, e] of this.lists) e.list.update(true);
  }

  // load shows a freshly fetched model.
  load(model) {
    this.model = model;
    this.renderHead();
    this.renderNotes();
    this.renderGroups();
    this.timeline.setModel(model);
    this.renderCheckpoints();
    this.renderFailures();
    this.renderPanel();
    this.renderResult();
    this.renderLog(true);
    this.renderScript();
    this.renderExtra();
  }

  // changed shows what events changed.
  changed(ch) {
    if (ch.groups) {
      this.model.regroup();
      this.renderGroups();
    } else if (ch.calls.size) {
      const touched = new Map();
      for (const path of ch.calls) {
        const c = this.model.calls.get(path);
        if (!c) continue;
        const g = this.model.group(c.phase || "");
        if (!g) continue;
        if (!touched.has(g)) touched.set(g, new Set());
        touched.get(g).add(c);
      }
      for (const [g, items] of touched) {
        countGroup(g);
        const entry = this.lists.get(g.title);
        if (!entry) continue;
        entry.list.refresh(items);
        this.fillGroupHead(entry, g);
      }
    }
    if (ch.calls.size || ch.run) {
      this.renderHead();
      this.renderFailures();
    }
    if (ch.calls.size || ch.groups || ch.run) this.timeline.schedule();
    if (this.app.selectedCall && ch.calls.has(this.app.selectedCall)) this.renderPanel();
    if (ch.logs) this.renderLog(false);
    if (ch.run) this.renderResult();
  }

  renderHead() {
    const m = this.model, s = m.summary;
    setText(this.title, s.name || m.detail.script?.name || "(unnamed)");
    document.title = (s.name || s.runId) + " · " + (s.status || "unknown") + " · dynworkflow";
    setText(this.idEl, s.runId);
    this.badge.className = "badge " + statusClass(s.status);
    setText(this.badge, statusText(s));
    const nScript = m.scriptErrorCount();
    this.scriptBadge.hidden = nScript === 0;
    setText(this.scriptBadge, nScript + (nScript === 1 ? " script error" : " script errors"));
    setText(this.reason, s.status === "paused" ? s.pauseReason || "" : s.status === "failed" ? s.error || "" : "");
    setText(this.desc, s.description || "");
    this.desc.hidden = !s.description;
    this.renderActions();

    const n = m.counts();
    const pp = phaseProgress(s);
    const st = this.app.summaryOf(s.runId) || s;
    const stats = st.stats || {};
    const items = [
      ["Phase", pp.text ? pp.text + (pp.of ? " (" + pp.step + " of " + pp.of + ")" : "") : "—"],
      ["Agents", agentsLine(n, s.status === "running" ? stats.queued || 0 : 0)],
      ["Tokens", count((stats.inputTokens || 0) + (stats.outputTokens || 0)) + (stats.cachedInputTokens ? " (" + count(stats.cachedInputTokens) + " cached)" : "")],
      ["Cost", spend(st) || "—"],
      ["Elapsed", elapsed(s) || "—"],
      ["Executor", s.executor || m.detail.options?.executor || "—"],
      ["Started", time(s.startedAt)],
      ["Execution", String((s.epoch || 0) + 1)],
    ];
    if (this.stats.children.length !== items.length) {
      replace(this.stats, items.map(([k]) => h("div", null, h("dt", null, k), h("dd", { dataset: { stat: k.toLowerCase() } }))));
    }
    items.forEach(([, v], i) => setText(this.stats.children[i].lastChild, v));
  }

  tick() {
    this.timeline.tick();
    const s = this.model.summary;
    // Calls waiting for a worker publish no event: while the run runs,
    // its totals are asked for now and then.
    if (s.status === "running" && ++this.ticks % 2 === 0) this.app.scheduleOverview();
    if (s.status === "running") setText(this.stats.querySelector("[data-stat=elapsed]"), elapsed(s));
    for (const [, e] of this.lists) {
      const running = new Set(e.group.calls.filter((c) => c.status === "running"));
      if (running.size) e.list.refresh(running);
    }
  }

  renderActions() {
    const status = this.model.summary.status;
    const offered = actionsFor[status] || ["pause", "resume", "stop", "delete"];
    // The buttons stay the same elements while the same ones are offered:
    // a button replaced between a press and its release takes no click.
    const key = offered.join(",") + "|" + this.busy;
    if (this.actions.dataset.key === key) return;
    this.actions.dataset.key = key;
    replace(this.actions, offered.map((a) => h("button", {
      type: "button", class: ["btn", a === "delete" || a === "stop" ? "danger" : a === "resume" ? "primary" : null],
      dataset: { action: a }, disabled: !!this.busy,
      on: { click: () => this.act(a) },
    }, this.busy === a ? actionBusy[a] : actionLabels[a])));
  }

  async act(action) {
    const id = this.model.id;
    if (action === "delete" && !(await this.app.confirm("Delete " + id + "?", "Its journal and snapshot are removed for good. This cannot be undone.", "Delete"))) return;
    if (action === "stop" && !(await this.app.confirm("Stop " + id + "?", "A stopped run cannot be resumed.", "Stop"))) return;
    this.busy = action;
    this.renderActions();
    try {
      await this.app.api.action(id, action);
      if (action === "delete") {
        this.app.notify("Deleted " + id + ".");
        location.hash = "";
        return;
      }
    } catch (err) {
      this.app.notify(actionLabels[action] + " failed: " + err.message, true);
    } finally {
      this.busy = "";
      this.renderActions();
    }
    this.app.scheduleRunFetch(true);
  }

  renderCheckpoints() {
    const cps = this.app.checkpoints().filter((c) => c.runId === this.model.id);
    this.cpSection.hidden = cps.length === 0;
    syncForms(this.cpBox, cps, (cp) => checkpointForm(cp, { api: this.app.api, onGone: (c, how) => this.app.checkpointGone(c, how) }));
  }

  renderGroups() {
    const seen = new Set();
    let prev = null;
    for (const g of this.model.groups) {
      seen.add(g.title);
      let e = this.lists.get(g.title);
      if (!e) {
        e = this.newGroup(g);
        this.lists.set(g.title, e);
      }
      e.group = g;
      e.list.setItems(g.calls);
      this.fillGroupHead(e, g);
      const at = prev ? prev.nextSibling : this.phases.firstChild;
      if (at !== e.section) this.phases.insertBefore(e.section, at);
      prev = e.section;
    }
    for (const [t, e] of this.lists) {
      if (!seen.has(t)) {
        e.section.remove();
        this.lists.delete(t);
      }
    }
    if (!this.model.groups.length) replace(this.phases, h("p", { class: "muted" }, "No agent has started yet."));
    else if (this.phases.firstChild && this.phases.firstChild.tagName === "P") this.phases.firstChild.remove();
  }

  newGroup(g) {
    const title = g.title || "No phase";
    const toggle = h("button", { type: "button", class: "phase-toggle", "aria-expanded": "true" }, h("span", { class: "chev", "aria-hidden": "true" }), title);
    const counts = h("span", { class: "phase-counts" });
    const bar = h("progress", { class: "phase-bar", "aria-label": title + " progress" });
    const list = new VirtualList({
      className: "agents",
      label: "Agents of " + title,
      createRow: () => h("button", { type: "button", class: "agent-row" }),
      renderRow: (el, c) => this.fillRow(el, c),
    });
    list.el.addEventListener("click", (e) => {
      const row = e.target.closest(".agent-row");
      if (row && row.dataset.path) this.app.selectCall(row.dataset.path);
    });
    // In a long phase the agents that matter may be far below: these
    // jump to the first running or failed one.
    const jump = (status) => h("button", {
      type: "button", class: "link jump", hidden: true, dataset: { jump: status },
      on: { click: () => this.jumpTo(e, status) },
    }, "first " + status);
    const jumps = h("span", { class: "phase-jumps" }, jump("running"), jump("failed"));
    const section = h("section", { class: "phase", dataset: { phase: g.title } },
      h("header", { class: "phase-head" }, toggle, jumps, counts, bar), list.el);
    const e = { section, list, toggle, counts, bar, jumps, group: g };
    toggle.addEventListener("click", () => {
      const open = toggle.getAttribute("aria-expanded") !== "true";
      toggle.setAttribute("aria-expanded", String(open));
      list.el.hidden = !open;
      if (open) list.update(true);
    });
    return e;
  }

  fillGroupHead(e, g) {
    const n = g.counts;
    const total = n.agents + n.checkpoints;
    const finished = n.done + n.failed + n.checkpoints;
    // While calls of the phase run, its count of agents is only those
    // started so far: it is left out rather than read as the total (the
    // run's line above has the total, as the terminal does).
    setText(e.counts, [
      n.running ? "" : n.agents + (n.agents === 1 ? " agent" : " agents"),
      n.running ? n.running + " running" : "",
      n.done ? n.done + " done" : "",
      n.failed ? n.failed + " failed" : "",
      n.replayed ? n.replayed + " replayed" : "",
      n.checkpoints ? n.checkpoints + (n.checkpoints === 1 ? " checkpoint" : " checkpoints") : "",
    ].filter(Boolean).join(" · "));
    for (const b of e.jumps.children) b.hidden = !(b.dataset.jump === "running" ? n.running : n.failed) || g.calls.length <= 10;
    e.bar.max = Math.max(total, 1);
    e.bar.value = finished;
    e.section.classList.toggle("current", g.title === this.model.summary.phase && this.model.summary.status === "running");
  }

  jumpTo(e, status) {
    if (e.list.el.hidden) e.toggle.click();
    const i = e.group.calls.findIndex((c) => c.status === status);
    if (i >= 0) e.list.focusIndex(i);
  }

  fillRow(el, c) {
    const st = callStatus(c);
    el.dataset.path = c.path;
    el.dataset.status = st;
    el.classList.toggle("selected", this.app.selectedCall === c.path);
    el.setAttribute("aria-current", this.app.selectedCall === c.path ? "true" : "false");
    const dur = callDuration(c);
    const name = c.label || (c.kind === "checkpoint" ? firstLine(c.prompt) || "checkpoint" : c.path);
    const note = [c.attempts > 1 ? c.attempts + " attempts" : "", c.error ? firstLine(c.error) : ""].filter(Boolean).join(" · ");
    el.replaceChildren(
      h("span", { class: ["dot", statusClass(st)], "aria-hidden": "true" }),
      h("span", { class: "a-name" }, c.kind === "checkpoint" ? "? " : "", name, note ? h("small", null, note) : null),
      h("span", { class: "a-status" }, st),
      h("span", { class: "a-exec" }, [c.executor, c.model].filter(Boolean).join(" · ")),
      h("span", { class: "a-tok" }, tokenCount(c.usage)),
      h("span", { class: "a-dur" }, dur !== undefined ? duration(dur) : ""));
  }

  renderPanel() {
    const path = this.app.selectedCall;
    const c = path ? this.model.calls.get(path) : null;
    this.timeline.select(c ? path : null);
    this.timeline.relayout(); // the panel takes or gives back width
    this.el.classList.toggle("has-panel", !!c);
    if (!c) {
      this.panelKey = "";
      for (const [, e] of this.lists) e.list.update(true);
      replace(this.panel, h("p", { class: "muted hint" }, "Select an agent to see its prompt, result and history."));
      return;
    }
    // A fetch that changed nothing about the call leaves the panel as it
    // is: the reader keeps their place and their focus.
    const key = JSON.stringify(c);
    if (this.panelKey === key && this.panel.firstChild && this.panel.firstChild.dataset.path === path) return;
    this.panelKey = key;
    const scroll = this.panel.firstChild && this.panel.firstChild.scrollTop;
    const panel = agentPanel(c, { onClose: () => this.app.selectCall(null),
      actions: agentActions(c, { app: this.app, runId: this.model.id, status: this.model.summary.status }) });
    replace(this.panel, panel);
    if (scroll) panel.scrollTop = scroll;
    for (const [, e] of this.lists) e.list.update(true);
  }

  // renderFailures shows what did not happen: the failed calls by cause,
  // and the errors the script threw in branches that became null.
  renderFailures() {
    const groups = failureGroups(this.model.calls.values());
    const scriptErrors = this.model.scriptErrors;
    this.failBox.hidden = groups.length === 0 && scriptErrors.length === 0;
    if (this.failBox.hidden) return;
    const key = groups.map((g) => g.cause + g.calls.length).join("|") + "||" + scriptErrors.map((g) => g.message + g.position + g.count).join("|");
    if (this.failBox.dataset.key === key) return;
    this.failBox.dataset.key = key;
    const total = groups.reduce((n, g) => n + g.calls.length, 0);
    const nScript = this.model.scriptErrorCount();
    const title = [
      total ? total + (total === 1 ? " failed call" : " failed calls") : "",
      nScript ? nScript + (nScript === 1 ? " script error" : " script errors") : "",
    ].filter(Boolean).join(" · ");
    replace(this.failBox,
      h("h2", { id: "failures-title" }, title, groups.length ? h("span", { class: "muted" }, " · " + groups.length + (groups.length === 1 ? " cause" : " causes")) : null),
      scriptErrors.length ? scriptErrorList(scriptErrors, this.model.summary.status) : null,
      groups.length ? h("ul", { class: "fail-groups" }, groups.map((g) => h("li", null,
        h("div", { class: "fail-cause" }, h("b", null, "×" + g.calls.length), " ", h("span", { class: "text" }, g.cause)),
        h("div", { class: "fail-calls" }, g.calls.slice(0, 8).map((c) => h("button", {
          type: "button", class: "link", on: { click: () => this.app.selectCall(c.path) },
        }, c.label || c.path)), g.calls.length > 8 ? h("span", { class: "muted" }, " and " + (g.calls.length - 8) + " more") : null)))) : null);
  }

  renderResult() {
    const m = this.model, s = m.summary;
    const parts = [h("h2", { id: "result-title" }, "Result")];
    if (s.status === "failed" && s.error) parts.push(h("pre", { class: "text error-box" }, s.error));
    if (m.detail.result !== undefined) parts.push(h("pre", { class: "text", dataset: { field: "run-result" } }, pretty(m.detail.result)));
    else if (s.status === "running") parts.push(h("p", { class: "muted" }, "The run has not finished."));
    else if (!(s.status === "failed" && s.error)) parts.push(h("p", { class: "muted" }, "No result."));
    replace(this.result, parts);
  }

  renderLog(full) {
    const logs = this.model.logs;
    const from = Math.max(0, logs.length - logShown);
    setText(this.logNote, logs.length ? (from ? "The last " + logShown + " of " + logs.length + " lines." : "") : "Nothing logged yet.");
    if (full || this.logList.childElementCount === 0 || this.logList.dataset.from !== String(from) && from > 0) {
      replace(this.logList, logs.slice(from).map(logLine));
    } else {
      const have = Number(this.logList.dataset.count || 0);
      for (let i = Math.max(have, from); i < logs.length; i++) this.logList.appendChild(logLine(logs[i]));
      while (this.logList.childElementCount > logShown) this.logList.firstChild.remove();
    }
    this.logList.dataset.from = String(from);
    this.logList.dataset.count = String(logs.length);
  }

  renderScript() {
    const d = this.model.detail;
    const sc = d.script || {};
    const ex = d.executions || [];
    const traced = ex.some((e) => e.trace);
    replace(this.script,
      h("summary", null, "Script, arguments and executions"),
      h("dl", { class: "facts" },
        h("dt", null, "Script"), h("dd", null, h("code", null, sc.path || "")),
        h("dt", null, "Hash"), h("dd", null, h("code", null, (sc.hash || "").slice(0, 16))),
        h("dt", null, "Arguments"), h("dd", null, h("pre", { class: "text" }, d.args === undefined ? "none" : pretty(d.args))),
        h("dt", null, "Options"), h("dd", null, h("pre", { class: "text" }, pretty(d.options)))),
      ex.length ? h("table", { class: "executions" },
        h("caption", null, "Executions"),
        h("thead", null, h("tr", null, ["#", "Rule", "Started", "Ended as", "Replayed", "Live", "Failed", traced ? "Trace" : null]
          .filter(Boolean).map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", null, ex.map((e) => h("tr", null,
          h("td", null, String(e.epoch + 1)), h("td", null, e.rule), h("td", null, time(e.startedAt)),
          h("td", null, e.end ? e.end.status + (e.end.pauseReason ? " (" + e.end.pauseReason + ")" : "") : "—"),
          h("td", null, e.end ? String(e.end.replayed || 0) : ""), h("td", null, e.end ? String(e.end.live || 0) : ""),
          h("td", null, e.end ? String(e.end.failed || 0) : ""),
          traced ? h("td", null, e.trace ? h("code", { title: "OpenTelemetry trace id" }, e.trace.traceId) : "") : null)))) : null,
      executorsTable(d.executors || []),
      worktreesList(d.worktrees || []),
      (d.children || []).length ? h("p", null, "Nested workflows: ", d.children.map((c) => c.name || c.path).join(", ")) : null,
      sc.text ? h("pre", { class: "text code", dataset: { field: "script" } }, sc.text) : null);
  }

  // renderNotes says what the reader must know before the numbers: that
  // the answers are simulated, that lines of the journal are damaged.
  renderNotes() {
    const d = this.model.detail;
    const notes = [];
    // Simulated answers are said where the status is, as the terminal
    // says them in its head line: short, with the way out on hover.
    this.sim.hidden = !d.simulatedAnswers;
    const damaged = d.damaged || [];
    if (damaged.length || d.tornBytes) {
      notes.push(h("div", { class: "note error", dataset: { note: "damaged" } },
        h("b", null, damaged.length ? damaged.length + (damaged.length === 1 ? " damaged journal line" : " damaged journal lines") : "A torn journal tail"),
        damaged.length ? h("ul", null, damaged.slice(0, 20).map((r) => h("li", null, "line " + r.line + ": " + (r.effect || r.reason)))) : null,
        d.tornBytes ? h("p", null, d.tornBytes + " bytes of an unfinished last record; the next resume moves them aside.") : null));
    }
    replace(this.notes, notes);
    this.notes.hidden = notes.length === 0;
  }

  // renderExtra lists, folded, the parts of the detail this page does not
  // know (a newer server's), so that nothing the server says is hidden.
  renderExtra() {
    const d = this.model.detail;
    const keys = Object.keys(d).filter((k) => !knownDetail.has(k) && d[k] !== null && d[k] !== undefined);
    replace(this.extra, keys.length ? h("details", { class: "script extra-fields" },
      h("summary", null, "More from the server"),
      keys.map((k) => h("section", { class: "extra-field" }, h("h3", null, k), h("pre", { class: "text" }, pretty(d[k]))))) : null);
  }

  // relayout follows a window resize.
  relayout() {
    this.timeline.relayout();
    for (const [, e] of this.lists) e.list.relayout();
  }

  scrolled() {
    for (const [, e] of this.lists) e.list.update(false);
  }

  focusCall(path) {
    for (const [, e] of this.lists) {
      const i = e.group.calls.findIndex((c) => c.path === path);
      if (i >= 0) return e.list.focusIndex(i);
    }
    return false;
  }
}

// agentsLine is the run's calls as the terminal counts them: done of all
// made so far, those running and those waiting for a worker.
function agentsLine(n, queued) {
  const total = n.done + n.failed + n.running + queued;
  return [
    n.done + "/" + total + " done",
    n.running ? n.running + " running" : "",
    queued ? queued + " queued" : "",
    n.failed ? n.failed + " failed" : "",
    n.replayed ? n.replayed + " replayed" : "",
  ].filter(Boolean).join(" · ");
}

// scriptErrorList lists the script errors by cause: where each was
// thrown, what it said, how many branches it made null.
function scriptErrorList(groups, status) {
  return h("div", { class: "script-errors-box", dataset: { field: "script-errors" } },
    h("p", { class: "muted" }, "The script threw in these parallel() or pipeline() branches, and each became null" +
      (status === "completed" ? ": the run completed without their work." : ".")),
    h("ul", { class: "fail-groups" }, groups.map((g) => h("li", null,
      h("div", { class: "fail-cause" }, h("b", null, "×" + g.count), " ",
        g.position ? h("code", { class: "pos" }, g.position) : null, g.position ? " " : null,
        h("span", { class: "text" }, g.message)),
      h("div", { class: "fail-calls muted" }, "first in branch " + g.firstPath)))));
}

// executorsTable lists the executors the run could use, as configured.
function executorsTable(defs) {
  if (!defs.length) return null;
  return h("table", { class: "executions executors" },
    h("caption", null, "Executors"),
    h("thead", null, h("tr", null, ["Name", "Kind", "Model", "Effort", "Permissions", "Runs"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", null, defs.map((e) => h("tr", { dataset: { executor: e.name } },
      h("td", null, h("code", null, e.name)), h("td", null, e.kind || ""), h("td", null, e.model || ""),
      h("td", null, e.effort || ""), h("td", null, e.permissions || ""),
      h("td", null, h("code", null, (e.command || [e.binary, ...(e.args || [])].filter(Boolean)).join(" ")))))));
}

// worktreesList lists the worktrees the run's isolated calls kept.
function worktreesList(kept) {
  if (!kept.length) return null;
  return h("table", { class: "executions worktrees" },
    h("caption", null, "Kept worktrees"),
    h("thead", null, h("tr", null, ["Call", "Branch", "Status"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", null, kept.map((w) => h("tr", null,
      h("td", null, w.label || w.path), h("td", null, h("code", null, w.branch || "")),
      h("td", null, (w.status || "") + (w.interrupted ? " (interrupted)" : ""))))));
}

function logLine(l) {
  return h("li", { class: ["log-line", "lv-" + (l.level || "info")] },
    h("time", { datetime: l.time || "" }, time(l.time)),
    l.level && l.level !== "info" ? h("span", { class: "lv" }, l.level) : null,
    l.scope && l.scope !== "/" ? h("span", { class: "scope" }, l.scope) : null,
    h("span", { class: "msg" }, l.message || ""));
}

function tokenCount(u) {
  const n = u ? (u.inputTokens || 0) + (u.outputTokens || 0) : 0;
  return n ? count(n) + " tok" : "";
}

function firstLine(s) {
  if (!s) return "";
  const line = String(s).split("\n")[0];
  return line.length > 120 ? line.slice(0, 119) + "…" : line;
}
