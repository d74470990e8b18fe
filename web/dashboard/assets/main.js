// The dashboard's entry point: the token, the route (#run=<id>&call=<path>),
// the overview and the selected run, and the one event stream that keeps
// them current. Events are applied once per animation frame, in a batch;
// what they lack is fetched again, at a rate that follows what a fetch
// costs, so a 1,000-agent run does not refetch itself to death.

import { API, EventStream } from "./api.js";
import { h, replace, setText } from "./dom.js";
import { RunModel, newChanges } from "./model.js";
import { RunList } from "./runlist.js";
import { RunView } from "./runview.js";
import { applySpend } from "./steer.js";

const tokenKey = "dynworkflow.token";
const overviewEvery = 700; // ms between overview fetches while events flow
const measureLimit = 2000;

// takeToken moves a token from the address bar to sessionStorage, and
// takes it out of the address bar, its history entry included.
function takeToken() {
  const frag = new URLSearchParams(location.hash.slice(1));
  const query = new URLSearchParams(location.search);
  const token = frag.get("token") || query.get("token");
  if (token) {
    sessionStorage.setItem(tokenKey, token);
    frag.delete("token");
    query.delete("token");
    const q = query.toString(), f = frag.toString();
    history.replaceState(null, "", location.pathname + (q ? "?" + q : "") + (f ? "#" + f : ""));
  }
  return sessionStorage.getItem(tokenKey);
}

class App {
  constructor(token) {
    this.main = document.getElementById("main");
    this.conn = document.getElementById("conn");
    this.noticeEl = document.getElementById("notice");
    this.api = new API(token, () => this.unauthorized());
    this.overview = null;
    this.cps = new Map();
    this.goneCps = new Map(); // checkpoint id -> when it was answered or withdrawn
    this.selectedRun = null;
    this.selectedCall = null;
    this.model = null;
    this.view = null;
    this.list = null;
    this.queue = [];
    this.flushing = false;
    this.overviewFetch = { inflight: false, again: false, timer: 0, last: 0 };
    // seenSeq is the sequence of the latest event applied.
    this.seenSeq = 0;
    this.runFetch = { inflight: false, again: false, timer: 0, last: 0, cost: 0, during: null };
    this.opened = 0;
    this.measures = 0;
    this.stopped = false;
  }

  start() {
    addEventListener("hashchange", () => {
      // A dashboard link opened in this tab again carries the token.
      if (takeToken() !== this.api.token) {
        location.reload();
        return;
      }
      this.route();
    });
    addEventListener("popstate", () => this.route());
    addEventListener("keydown", (e) => this.key(e));
    let frame = 0;
    const onScroll = () => {
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        if (this.view) this.view.scrolled();
      });
    };
    addEventListener("scroll", onScroll, { passive: true });
    addEventListener("resize", () => {
      if (this.view) this.view.relayout();
    });
    setInterval(() => {
      if (this.view) this.view.tick();
      if (this.list && !this.view) this.list.tick();
    }, 1000);
    document.getElementById("home").addEventListener("click", (e) => {
      e.preventDefault();
      location.hash = "";
    });
    this.load();
  }

  // load fetches the overview until the runtime answers, then shows the
  // page and opens the event stream.
  async load() {
    let ov;
    try {
      ov = await this.api.overview();
    } catch (err) {
      if (this.stopped) return;
      this.setConn("offline", "offline");
      replace(this.main, h("p", { class: "gate" }, "The runtime does not answer: " + err.message + ". Retrying…"));
      setTimeout(() => this.load(), 2000);
      return;
    }
    this.takeOverview(ov, 0);
    this.route();
    document.body.dataset.state = "ready";
    this.stream = new EventStream(this.api, {
      since: ov.runtime && ov.runtime.sequence,
      onEvent: (ev) => this.enqueue(ev),
      onOpen: () => this.streamOpened(),
      onDown: (reason, wait) => this.setConn("down", "reconnecting in " + Math.round(wait / 1000) + " s (" + reason + ")"),
    });
  }

  streamOpened() {
    this.setConn("live", "live");
    // A stream opened again may have missed events: rebuild from the
    // overview and the selected run.
    if (this.opened++ > 0) {
      this.fetchOverview();
      this.scheduleRunFetch(true);
    }
  }

  setConn(state, text) {
    this.conn.dataset.conn = state;
    document.body.dataset.conn = state;
    setText(this.conn, text);
  }

  unauthorized() {
    if (this.stopped) return;
    this.stopped = true;
    sessionStorage.removeItem(tokenKey);
    if (this.stream) this.stream.close();
    gate("The runtime refused this page's token.",
      "It has probably been restarted, and a new runtime has a new token. Open the dashboard link that dynworkflow serve (or run --ui) printed this time.",
      "unauthorized");
  }

  // route shows what the address names.
  route() {
    if (this.stopped) return;
    const p = new URLSearchParams(location.hash.slice(1));
    const run = p.get("run");
    const call = p.get("call");
    if (!run) {
      this.selectedRun = null;
      this.selectedCall = null;
      this.model = null;
      this.view = null;
      if (!this.list) this.list = new RunList(this);
      this.list.render();
      this.show(this.list.el, "Runs");
      return;
    }
    const callChanged = call !== this.selectedCall;
    this.selectedCall = call;
    if (run !== this.selectedRun) {
      this.selectedRun = run;
      this.model = null;
      this.view = null;
      this.show(h("div", { class: "view-run" }, h("nav", { class: "crumbs" }, h("a", { href: "#" }, "← Runs")),
        h("p", { class: "loading" }, "Loading " + run + "…")), run);
      this.scheduleRunFetch(true);
      return;
    }
    if (this.view && callChanged) this.view.renderPanel();
  }

  // show puts a view on the page. The focus, if it was on what is gone,
  // goes to the start of the new view, as after a page load.
  show(el, title) {
    replace(this.main, el);
    document.title = title + " · dynworkflow";
    scrollTo(0, 0);
    if (!document.activeElement || document.activeElement === document.body || !document.activeElement.isConnected) {
      this.main.focus({ preventScroll: true });
    }
  }

  // selectCall opens the panel of one call (null closes it). Opening it
  // is a step the Back button undoes (on a phone the panel covers the
  // page); moving from one agent to another is not. On a narrow screen
  // the focus goes into the panel; closing it puts the focus back on the
  // agent's row.
  selectCall(path) {
    const was = this.selectedCall;
    const p = new URLSearchParams();
    p.set("run", this.selectedRun);
    if (path) p.set("call", path);
    const pushed = history.state && history.state.panel;
    if (!path && pushed) {
      history.back(); // popstate routes again when it lands
      this.selectedCall = null;
      if (this.view) this.view.renderPanel();
    } else {
      if (path && !was) history.pushState({ panel: true }, "", "#" + p.toString());
      else history.replaceState(null, "", "#" + p.toString());
      this.route();
    }
    if (path) {
      const title = document.getElementById("agent-title");
      if (title && matchMedia("(max-width: 59.99rem)").matches) title.focus();
    } else if (was && this.view) {
      this.view.focusCall(was);
    }
  }

  key(e) {
    if (e.key === "Escape" && this.selectedCall && !document.querySelector("dialog[open]")) {
      e.preventDefault();
      this.selectCall(null);
    }
  }

  takeOverview(ov, requested) {
    this.overview = ov;
    for (const [id, at] of this.goneCps) if (at < requested - 60000) this.goneCps.delete(id);
    this.cps.clear();
    for (const cp of ov.checkpoints || []) {
      const gone = this.goneCps.get(cp.id);
      if (gone && gone >= requested) continue;
      this.cps.set(cp.id, cp);
    }
    const el = document.getElementById("project");
    if (ov.project) setText(el, ov.project.cwd);
  }

  checkpoints() {
    return [...this.cps.values()].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
  }

  summaryOf(id) {
    return this.overview && (this.overview.runs || []).find((r) => r.runId === id);
  }

  // checkpointGone drops a checkpoint answered here or elsewhere.
  checkpointGone(cp, how) {
    this.dropCheckpoint(cp.id);
    this.notify(how === "answered" ? "Answered: " + firstLine(cp.prompt) : "That question was already answered elsewhere.");
    this.renderCheckpoints();
    this.scheduleRunFetch(true);
  }

  dropCheckpoint(id) {
    this.cps.delete(id);
    this.goneCps.set(id, performance.now());
  }

  renderCheckpoints() {
    if (this.view) this.view.renderCheckpoints();
    else if (this.list) this.list.render();
  }

  notify(text, isError) {
    const el = this.noticeEl;
    el.textContent = text;
    el.classList.toggle("error", !!isError);
    el.hidden = false;
    clearTimeout(this.noticeTimer);
    this.noticeTimer = setTimeout(() => (el.hidden = true), isError ? 10000 : 5000);
  }

  // confirm asks in a modal dialog; it resolves to true for OK.
  confirm(title, text, ok) {
    const d = document.getElementById("confirm");
    setText(document.getElementById("confirm-title"), title);
    setText(document.getElementById("confirm-text"), text);
    setText(document.getElementById("confirm-ok"), ok);
    return new Promise((resolve) => {
      const done = (v) => {
        d.removeEventListener("close", onClose);
        okBtn.removeEventListener("click", onOk);
        cancelBtn.removeEventListener("click", onCancel);
        if (d.open) d.close();
        resolve(v);
      };
      const okBtn = document.getElementById("confirm-ok");
      const cancelBtn = document.getElementById("confirm-cancel");
      const onOk = () => done(true);
      const onCancel = () => done(false);
      // Esc closes the dialog: that is a No. The close event comes a
      // task after close(), so the one of a previous question can arrive
      // while this one is open; it is ignored.
      const onClose = () => {
        if (!d.open) done(false);
      };
      okBtn.addEventListener("click", onOk);
      cancelBtn.addEventListener("click", onCancel);
      d.addEventListener("close", onClose);
      d.showModal();
      cancelBtn.focus();
    });
  }

  enqueue(ev) {
    this.queue.push(ev);
    if (this.flushing) return;
    this.flushing = true;
    // Frames do not come while the tab is hidden; events still must not
    // pile up.
    if (document.hidden) setTimeout(() => this.flush(), 250);
    else requestAnimationFrame(() => this.flush());
  }

  // flush applies the events of one frame.
  flush() {
    this.flushing = false;
    if (this.stopped) return;
    const start = performance.now();
    const evs = this.queue;
    this.queue = [];
    const ch = newChanges();
    let listChanged = false, cpsChanged = false, overviewStale = false, resync = false;
    for (const ev of evs) {
      if (ev.type === "reset") {
        resync = true;
        continue;
      }
      overviewStale = true;
      if (ev.sequence > this.seenSeq) this.seenSeq = ev.sequence;
      const p = ev.payload || {};
      switch (ev.type) {
        case "checkpoint.pending":
          if (p.id && !this.cps.has(p.id)) {
            this.cps.set(p.id, p);
            this.goneCps.delete(p.id);
            cpsChanged = true;
          }
          break;
        case "checkpoint.withdrawn":
        case "checkpoint.answered":
          for (const [id, cp] of this.cps) {
            if (cp.runId === ev.runId && cp.path === p.path) {
              this.dropCheckpoint(id);
              cpsChanged = true;
            }
          }
          break;
        case "run.status": {
          const r = this.summaryOf(ev.runId);
          if (r) {
            Object.assign(r, { status: p.status, pauseReason: p.pauseReason || "", resumeAt: p.resumeAt, error: p.error || "" });
            listChanged = true;
          }
          break;
        }
        case "run.spend":
          if (this.summaryOf(ev.runId)) {
            applySpend(this.summaryOf(ev.runId), p);
            listChanged = true;
          }
          break;
        case "run.deleted":
          if (this.overview) this.overview.runs = (this.overview.runs || []).filter((r) => r.runId !== ev.runId);
          listChanged = true;
          if (ev.runId === this.selectedRun) {
            this.notify(ev.runId + " was deleted.");
            location.hash = "";
          }
          break;
      }
      if (this.model && ev.runId === this.model.id) {
        this.model.apply(ev, ch);
        if (this.runFetch.during) this.runFetch.during.push(ev);
      } else if (this.runFetch.inflight && this.runFetch.during && ev.runId === this.selectedRun) {
        this.runFetch.during.push(ev);
      }
    }
    if (this.view) {
      this.view.changed(ch);
      if (cpsChanged) this.view.renderCheckpoints();
    } else if (this.list && (listChanged || cpsChanged)) {
      this.list.render();
    }
    if (resync) {
      this.fetchOverview();
      this.scheduleRunFetch(true);
    } else {
      if (overviewStale) this.scheduleOverview();
      if (ch.stale || (this.selectedCall && (ch.finished.has(this.selectedCall) || ch.progress.has(this.selectedCall)))) this.scheduleRunFetch(false);
    }
    if (evs.length) {
      if (++this.measures > measureLimit) {
        performance.clearMeasures("dynworkflow.apply");
        this.measures = 0;
      }
      performance.measure("dynworkflow.apply", { start, end: performance.now(), detail: { events: evs.length } });
    }
  }

  scheduleOverview() {
    const f = this.overviewFetch;
    if (f.inflight) {
      f.again = true;
      return;
    }
    if (f.timer) return;
    f.timer = setTimeout(() => {
      f.timer = 0;
      this.fetchOverview();
    }, Math.max(0, f.last + overviewEvery - performance.now()));
  }

  async fetchOverview() {
    const f = this.overviewFetch;
    if (f.inflight) {
      f.again = true;
      return;
    }
    f.inflight = true;
    const requested = performance.now();
    try {
      const ov = await this.api.overview();
      this.takeOverview(ov, requested);
      // The server answers with the listing it holds while it makes a
      // newer one: one behind the events applied here (a run's end, say)
      // is fetched again, or the list would show it stale until the next
      // event.
      if (ov.runtime && ov.runtime.sequence < this.seenSeq) f.again = true;
      if (this.view) {
        this.view.renderHead();
        this.view.renderCheckpoints();
      } else if (this.list) this.list.render();
    } catch (err) {
      if (err.status !== 401) this.setConn("down", "the runtime does not answer");
    } finally {
      f.inflight = false;
      f.last = performance.now();
      if (f.again) {
        f.again = false;
        this.scheduleOverview();
      }
    }
  }

  // scheduleRunFetch fetches the selected run again: soon, or after an
  // interval that grows with what the last fetch and render cost.
  scheduleRunFetch(soon) {
    const f = this.runFetch;
    if (!this.selectedRun) return;
    if (f.inflight) {
      f.again = true;
      return;
    }
    if (f.timer) {
      if (!soon) return;
      clearTimeout(f.timer);
    }
    const interval = Math.min(10000, Math.max(1000, f.cost * 4));
    const wait = soon ? 0 : Math.max(0, f.last + interval - performance.now());
    f.timer = setTimeout(() => {
      f.timer = 0;
      this.fetchRun();
    }, wait);
  }

  // fetchSelected loads the run the user chose while another one was
  // loading: its fetch waited for that one's (see scheduleRunFetch), and
  // without it the page stayed on "Loading…".
  fetchSelected() {
    this.runFetch.again = false;
    this.scheduleRunFetch(true);
  }

  async fetchRun() {
    const f = this.runFetch;
    const id = this.selectedRun;
    if (!id || f.inflight) return;
    f.inflight = true;
    f.during = [];
    const t0 = performance.now();
    let detail;
    try {
      detail = await this.api.run(id);
    } catch (err) {
      f.inflight = false;
      f.during = null;
      if (id !== this.selectedRun) return this.fetchSelected();
      if (err.status === 401) return;
      if (err.status === 404 || err.status === 400) {
        this.model = null;
        this.view = null;
        this.show(h("div", { class: "view-run" }, h("nav", { class: "crumbs" }, h("a", { href: "#" }, "← Runs")),
          h("p", { class: "gate" }, "No run " + id + " in this project: " + err.message)), id);
        return;
      }
      this.setConn("down", "the runtime does not answer");
      f.last = performance.now();
      this.scheduleRunFetch(false);
      return;
    }
    f.inflight = false;
    const during = f.during;
    f.during = null;
    if (id !== this.selectedRun) return this.fetchSelected();
    const t1 = performance.now();
    const model = new RunModel(detail);
    const ch = newChanges();
    for (const ev of during) model.apply(ev, ch);
    this.model = model;
    if (this.view) this.view.load(model);
    else {
      this.view = new RunView(this, model);
      this.show(this.view.el, model.summary.name || id);
      // The lists could not see where they are until now.
      this.view.scrolled();
    }
    const t2 = performance.now();
    f.cost = t2 - t0;
    f.last = t2;
    requestAnimationFrame(() => {
      performance.measure("dynworkflow.render-run", {
        start: t1, end: performance.now(),
        detail: { calls: model.calls.size, fetchMs: t1 - t0, buildMs: t2 - t1 },
      });
    });
    if (f.again) {
      f.again = false;
      this.scheduleRunFetch(false);
    }
  }
}

function firstLine(s) {
  const line = String(s || "").split("\n")[0];
  return line.length > 80 ? line.slice(0, 79) + "…" : line;
}

// gate replaces the page with a message and no data.
function gate(title, text, state) {
  document.body.dataset.state = state;
  const conn = document.getElementById("conn");
  conn.dataset.conn = "none";
  conn.textContent = "";
  replace(document.getElementById("main"), h("section", { class: "gate", "aria-labelledby": "gate-title" },
    h("h1", { id: "gate-title" }, title), h("p", null, text),
    h("p", { class: "muted" }, "The link looks like http://127.0.0.1:PORT/#token=…; the token travels after the #, so it never reaches a server log.")));
}

const token = takeToken();
if (!token) {
  gate("This dashboard needs its link.",
    "Open the dashboard link that dynworkflow serve (or dynworkflow run --ui) printed: it carries the access token. Without it the page shows nothing.",
    "no-token");
} else {
  new App(token).start();
}
