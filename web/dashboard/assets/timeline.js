// The timeline of a run: every call as a bar on a time axis, in a band per
// phase (a Gantt chart), calls packed into lanes so that what ran at once
// stands side by side. Live calls, failures, calls still running, answers
// replayed from the journal, retries and checkpoint waits each look
// different. It zooms (buttons, Ctrl+wheel or a pinch, + and -) and pans
// (drag, Shift+wheel, the arrow keys), and a click on a bar opens that
// call's panel, as a click on its row does.
//
// It is drawn on a canvas: a thousand bars are one path each, a few
// milliseconds in all, where a thousand elements would cost a layout. The
// text it draws (phase titles, labels) is painted, never parsed.

import { h, setText } from "./dom.js";
import { duration, time } from "./format.js";

const axisH = 22; // the time axis at the top
const bandHead = 18; // a phase's title above its lanes
const bandGap = 6;
const maxLaneH = 12;
const minLaneH = 2;
const maxBandH = 120; // lanes get thinner rather than a band taller
const minBarPx = 2; // a bar never gets thinner than this
const pad = 8;

export class Timeline {
  constructor({ onSelect }) {
    this.onSelect = onSelect;
    this.model = null;
    this.selected = null;
    this.view = null; // [from, to] in ms since the epoch, or null to fit
    this.bars = []; // what was drawn, for hit testing
    this.frame = 0;
    this.measured = 0;
    this.canvas = h("canvas", {
      class: "tl-canvas", tabindex: "0", role: "img",
      "aria-label": "Timeline of the run's calls; select an agent in the list below to read it",
    });
    this.tip = h("div", { class: "tl-tip", role: "tooltip", hidden: true });
    this.range = h("span", { class: "tl-range muted" });
    const button = (label, title, fn) => h("button", { type: "button", class: "btn tl-btn", title, "aria-label": title, on: { click: fn } }, label);
    this.visible = false;
    this.el = h("div", { class: "timeline", role: "region", "aria-label": "Timeline", hidden: true },
      h("div", { class: "tl-head" },
        this.range,
        h("span", { class: "tl-legend", "aria-hidden": "true" },
          legend("live", "ran"), legend("running", "running"), legend("failed", "failed"),
          legend("replayed", "replayed"), legend("retried", "retried"), legend("wait", "waited for you")),
        h("span", { class: "tl-zoom", role: "group", "aria-label": "Zoom" },
          button("−", "Zoom out", () => this.zoom(2)),
          button("Fit", "Fit the whole run", () => this.fit()),
          button("+", "Zoom in", () => this.zoom(0.5)))),
      h("div", { class: "tl-body" }, this.canvas, this.tip));
    // The tests read what was drawn where.
    this.canvas.timeline = this;
    this.listen();
  }

  // setModel shows a run; the zoom is kept while it is the same run.
  setModel(model) {
    if (!this.model || this.model.id !== model.id) this.view = null;
    this.model = model;
    this.render();
  }

  // select highlights the call at path (null for none).
  select(path) {
    if (this.selected === path) return;
    this.selected = path;
    this.schedule();
  }

  // setVisible shows or hides the chart; hidden, it draws nothing.
  setVisible(on) {
    this.visible = on;
    this.el.hidden = !on;
    if (on) this.render();
  }

  // schedule draws once at the next frame, however many changes came.
  schedule() {
    if (this.frame || !this.visible) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  // tick redraws while calls run, so that their bars grow.
  tick() {
    if (this.running) this.schedule();
  }

  relayout() {
    this.schedule();
  }

  // spans are the calls as intervals, grouped as the model groups them.
  spans(now) {
    const out = [];
    let lo = Infinity, hi = -Infinity;
    this.running = false;
    for (const g of this.model.groups) {
      const items = [];
      for (const c of g.calls) {
        const s = span(c, now, this.model.epoch);
        if (!s) continue;
        if (s.kind === "running") this.running = true;
        items.push(s);
        lo = Math.min(lo, s.from);
        hi = Math.max(hi, s.to);
      }
      out.push({ title: g.title || "No phase", items });
    }
    return { bands: out, lo, hi };
  }

  render() {
    if (!this.model || !this.visible) return;
    const t0 = performance.now();
    const now = Date.now();
    const { bands, lo, hi } = this.spans(now);
    const width = Math.max(200, this.canvas.parentElement ? this.canvas.parentElement.clientWidth : 0);
    const empty = !isFinite(lo);
    const full = empty ? [now - 1000, now] : [lo, Math.max(hi, lo + 50)];
    const [from, to] = this.view || [full[0] - (full[1] - full[0]) * 0.01, full[1] + (full[1] - full[0]) * 0.01];
    const x = (t) => pad + ((t - from) / (to - from)) * (width - 2 * pad);
    const minDur = (minBarPx / Math.max(1, width - 2 * pad)) * (to - from);

    // Lanes: each bar goes in the first lane free when it starts.
    let height = axisH;
    const layout = [];
    for (const b of bands) {
      if (!b.items.length) continue;
      b.items.sort((p, q) => p.from - q.from || p.to - q.to);
      const ends = [];
      for (const s of b.items) {
        const end = Math.max(s.to, s.from + minDur);
        let lane = ends.findIndex((e) => e <= s.from);
        if (lane < 0) {
          lane = ends.length;
          ends.push(end);
        } else ends[lane] = end;
        s.lane = lane;
      }
      const lanes = Math.max(1, ends.length);
      const laneH = Math.max(minLaneH, Math.min(maxLaneH, Math.floor(maxBandH / lanes)));
      const shown = Math.min(lanes, Math.floor(maxBandH / laneH));
      layout.push({ band: b, top: height, laneH, shown });
      height += bandHead + shown * laneH + bandGap;
    }
    height = Math.max(height + pad, axisH + 40);

    const dpr = window.devicePixelRatio || 1;
    if (this.canvas.width !== Math.round(width * dpr) || this.canvas.height !== Math.round(height * dpr)) {
      this.canvas.width = Math.round(width * dpr);
      this.canvas.height = Math.round(height * dpr);
      this.canvas.style.width = width + "px";
      this.canvas.style.height = height + "px";
    }
    const ctx = this.canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    const col = colors(this.el);
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";

    drawAxis(ctx, col, from, to, x, width, height, full[0]);

    // Bars, one path per look: a thousand bars in a handful of fills.
    const paths = {};
    const path = (k) => paths[k] || (paths[k] = new Path2D());
    const marks = new Path2D();
    this.bars = [];
    let selectedRect = null;
    for (const { band, top, laneH, shown } of layout) {
      ctx.fillStyle = col.fg;
      ctx.fillText(band.title + "  ·  " + band.items.length + (band.items.length === 1 ? " call" : " calls"), pad, top + bandHead / 2);
      const y0 = top + bandHead;
      for (const s of band.items) {
        const lane = s.lane % shown;
        const left = x(s.from);
        const w = Math.max(minBarPx, x(s.to) - left);
        if (left > width || left + w < 0) continue;
        const y = y0 + lane * laneH;
        const bh = Math.max(1, laneH - (laneH > 4 ? 2 : 0));
        path(s.kind).rect(left, y, w, bh);
        if (s.retries && s.retries.length) {
          path("retried").rect(left, y, w, Math.max(1, Math.min(2, bh / 3)));
          for (const r of s.retries) marks.rect(x(r) - 0.75, y - 1, 1.5, bh + 2);
        }
        const rect = { x: left, y, w, h: bh, s };
        this.bars.push(rect);
        if (s.path === this.selected) selectedRect = rect;
      }
    }
    for (const [k, p] of Object.entries(paths)) {
      ctx.fillStyle = col[k] || col.live;
      if (k === "wait") {
        ctx.strokeStyle = col.wait;
        ctx.lineWidth = 1;
        ctx.globalAlpha = 0.35;
        ctx.fill(p);
        ctx.globalAlpha = 1;
        ctx.stroke(p);
      } else if (k === "replayed") {
        ctx.globalAlpha = 0.45;
        ctx.fill(p);
        ctx.globalAlpha = 1;
      } else ctx.fill(p);
    }
    ctx.fillStyle = col.retried;
    ctx.fill(marks);
    if (selectedRect) {
      ctx.strokeStyle = col.accent;
      ctx.lineWidth = 2;
      ctx.strokeRect(selectedRect.x - 1.5, selectedRect.y - 1.5, selectedRect.w + 3, selectedRect.h + 3);
    }
    if (empty) {
      ctx.fillStyle = col.muted;
      ctx.fillText("No call has started yet.", pad, axisH + 20);
    }
    this.drawn = { from, to, width, full };
    setText(this.range, empty ? "" : "from " + time(new Date(full[0]).toISOString()) + " · " + duration(to - from) +
      (this.view ? " shown of " + duration(full[1] - full[0]) : ""));
    this.canvas.setAttribute("aria-label", "Timeline of " + this.bars.length + " calls over " + duration(full[1] - full[0]) +
      "; select an agent in the list below to read it");
    if (++this.measured > 500) {
      performance.clearMeasures("dynworkflow.render-timeline");
      this.measured = 0;
    }
    performance.measure("dynworkflow.render-timeline", { start: t0, end: performance.now(), detail: { bars: this.bars.length } });
  }

  // zoom scales the shown window by f around its middle (or the time at
  // clientX).
  zoom(f, clientX) {
    const d = this.drawn;
    if (!d) return;
    const [from, to] = this.view || [d.from, d.to];
    let at = (from + to) / 2;
    if (clientX !== undefined) {
      const r = this.canvas.getBoundingClientRect();
      at = from + ((clientX - r.left - pad) / (d.width - 2 * pad)) * (to - from);
    }
    const span = Math.max(50, Math.min((to - from) * f, (d.full[1] - d.full[0]) * 1.1));
    const left = at - (at - from) * (span / (to - from));
    this.view = [left, left + span];
    this.render();
  }

  fit() {
    this.view = null;
    this.render();
  }

  pan(fraction) {
    const d = this.drawn;
    if (!d) return;
    const [from, to] = this.view || [d.from, d.to];
    const shift = (to - from) * fraction;
    this.view = [from + shift, to + shift];
    this.render();
  }

  // hit is the bar under a point of the canvas, if any.
  hit(clientX, clientY) {
    const r = this.canvas.getBoundingClientRect();
    const px = clientX - r.left, py = clientY - r.top;
    let best = null;
    for (const b of this.bars) {
      if (py < b.y - 1 || py > b.y + b.h + 1) continue;
      if (px >= b.x - 2 && px <= b.x + b.w + 2) {
        best = b;
        if (px >= b.x && px <= b.x + b.w) break;
      }
    }
    return best;
  }

  listen() {
    const c = this.canvas;
    let drag = null;
    c.addEventListener("pointerdown", (e) => {
      drag = { x: e.clientX, view: this.view || (this.drawn && [this.drawn.from, this.drawn.to]), moved: false };
    });
    c.addEventListener("pointermove", (e) => {
      if (drag && drag.view && Math.abs(e.clientX - drag.x) > 3) {
        drag.moved = true;
        const d = this.drawn;
        const shift = ((drag.x - e.clientX) / (d.width - 2 * pad)) * (drag.view[1] - drag.view[0]);
        this.view = [drag.view[0] + shift, drag.view[1] + shift];
        this.schedule();
        return;
      }
      this.hover(e);
    });
    c.addEventListener("pointerup", (e) => {
      const moved = drag && drag.moved;
      drag = null;
      if (moved) return;
      const b = this.hit(e.clientX, e.clientY);
      if (b) this.onSelect(b.s.path);
    });
    c.addEventListener("pointerleave", () => {
      drag = null;
      this.tip.hidden = true;
    });
    c.addEventListener("wheel", (e) => {
      if (e.ctrlKey || e.metaKey) {
        e.preventDefault();
        this.zoom(e.deltaY > 0 ? 1.25 : 0.8, e.clientX);
      } else if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        e.preventDefault();
        this.pan((e.deltaX || e.deltaY) / 800);
      }
    }, { passive: false });
    c.addEventListener("keydown", (e) => {
      const act = { "+": () => this.zoom(0.5), "=": () => this.zoom(0.5), "-": () => this.zoom(2), "0": () => this.fit(),
        ArrowLeft: () => this.pan(-0.2), ArrowRight: () => this.pan(0.2) }[e.key];
      if (act) {
        e.preventDefault();
        act();
      }
    });
  }

  hover(e) {
    const b = this.hit(e.clientX, e.clientY);
    this.canvas.classList.toggle("tl-over", !!b);
    if (!b) {
      this.tip.hidden = true;
      return;
    }
    const s = b.s;
    setText(this.tip, [s.name, words[s.kind] || s.kind, duration(s.to - s.from), s.retries && s.retries.length ? s.retries.length + (s.retries.length === 1 ? " retry" : " retries") : ""]
      .filter(Boolean).join(" · "));
    this.tip.hidden = false;
    const body = this.canvas.parentElement.getBoundingClientRect();
    this.tip.style.left = Math.min(e.clientX - body.left + 12, body.width - this.tip.offsetWidth - 4) + "px";
    this.tip.style.top = (e.clientY - body.top + 14) + "px";
  }
}

const words = { live: "ran", running: "running", failed: "failed", replayed: "replayed", interrupted: "interrupted", wait: "waited for an answer" };

// span is call c as an interval, or null when it has no time yet.
function span(c, now, epoch) {
  const start = Date.parse(c.startedAt);
  const end = Date.parse(c.endedAt);
  const name = c.label || (c.kind === "checkpoint" ? "checkpoint" : c.path);
  const retries = (c.retries || []).map((r) => Date.parse(r.at)).filter((t) => isFinite(t));
  if (c.kind === "checkpoint") {
    // A checkpoint's time is its wait for an answer.
    if (!isFinite(end)) return null;
    return { path: c.path, name, kind: "wait", from: end - (c.durMs || 0), to: end };
  }
  const replayed = c.source === "journal" || (c.status === "done" && (c.epoch || 0) < epoch);
  if (!isFinite(start)) {
    // A call replayed live has only the time of its replay.
    if (isFinite(end)) return { path: c.path, name, kind: replayed ? "replayed" : "live", from: end, to: end, retries };
    return null;
  }
  // An interrupted call ended with its execution, unanswered (engine.CallInterrupted).
  let kind = c.status === "failed" ? "failed" : c.status === "running" ? "running" : c.status === "interrupted" ? "interrupted" : replayed ? "replayed" : "live";
  const to = kind === "running" ? now : isFinite(end) ? end : start + (c.durMs || 0);
  return { path: c.path, name, kind, from: start, to: Math.max(to, start), retries };
}

// colors reads the page's palette, so that the chart follows light and
// dark like the rest.
function colors(el) {
  const cs = getComputedStyle(el);
  const v = (n) => cs.getPropertyValue(n).trim();
  return {
    fg: v("--fg"), muted: v("--muted"), line: v("--line"), accent: v("--accent"),
    live: v("--done"), running: v("--running"), failed: v("--failed"), replayed: v("--stopped"),
    retried: v("--paused"), wait: v("--waiting"), interrupted: v("--muted"),
  };
}

// drawAxis draws the ticks, labelled with the time since the run's first
// call (the range above says when that was).
function drawAxis(ctx, col, from, to, x, width, height, origin) {
  const step = niceStep((to - from) / Math.max(2, Math.floor(width / 90)));
  const first = origin + Math.ceil((from - origin) / step) * step;
  ctx.strokeStyle = col.line;
  ctx.lineWidth = 1;
  ctx.fillStyle = col.muted;
  for (let t = first; t <= to; t += step) {
    const px = Math.round(x(t)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(px, axisH - 4);
    ctx.lineTo(px, height);
    ctx.stroke();
    ctx.fillText(offset(t - origin), px + 3, axisH / 2);
  }
}

// niceStep rounds a tick interval up to 1, 2 or 5 times a unit.
function niceStep(ms) {
  const units = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000,
    600000, 900000, 1800000, 3600000, 7200000, 21600000, 43200000, 86400000];
  return units.find((u) => u >= ms) || 86400000 * Math.ceil(ms / 86400000);
}

// offset is a tick's label: "0", "250 ms", "1.5 s", "2 m 30 s".
function offset(ms) {
  if (Math.abs(ms) < 0.5) return "0";
  return (ms < 0 ? "−" : "") + duration(Math.abs(ms));
}

function legend(kind, text) {
  return h("span", { class: "tl-key" }, h("i", { class: "tl-swatch tl-" + kind }), text);
}
