// The panel of one call: what it was asked and answered, its transcript,
// and everything else the run's detail says about it. Fields this page
// does not know (an executor's permission policy, a worktree, ...) are
// listed too, as they come.

import { h } from "./dom.js";
import { compact, duration, pretty, time, tokens, cost, statusClass } from "./format.js";
import { callDuration, isStalled } from "./model.js";

const known = new Set([
  "path", "kind", "status", "epoch", "label", "phase", "prompt", "executor", "model", "result", "usage", "error",
  "source", "provider", "attempts", "durMs", "history", "startedAt", "endedAt", "retries", "route", "activity",
  // the page's own
  "liveHistory", "retryError", "resultPreview", "promptPreview",
]);

export function callStatus(c) {
  if (c.status === "done" && c.source === "journal") return "replayed";
  return c.status || "unknown";
}

// activityText says what a running call did last and when, and how long
// it has gone without progress when that is a while:
// "unreachable: Reconnecting... · 20:15:12 (3 s ago) · no progress for 41 s".
export function activityText(ca, now) {
  const a = ca.activity || {};
  const what = a.text ? a.kind + ": " + a.text : a.kind === "stream" ? "output streaming" : a.kind;
  const at = Date.parse(a.at);
  let text = what + (at ? " · " + time(a.at) + " (" + (now - at < 1000 ? "just now" : duration(now - at) + " ago") + ")" : "");
  const since = Date.parse(ca.since);
  if (since && now - since >= 10000 && (isStalled(a) || now - since > now - at + 1000)) text += " · no progress for " + duration(now - since);
  return h("span", { class: isStalled(a) ? "activity stalled" : "activity", dataset: { kind: a.kind || "" } }, text);
}

// agentPanel renders call c of the run.
export function agentPanel(c, { onClose, actions }) {
  const title = c.label || (c.kind === "checkpoint" ? "checkpoint" : c.path);
  const st = callStatus(c);
  const rows = [];
  const add = (k, v) => {
    if (v === undefined || v === null || v === "") return;
    rows.push(h("dt", null, k), h("dd", null, v));
  };
  add("Status", h("span", { class: ["badge", statusClass(st)] }, st));
  add("Kind", c.kind);
  add("Path", h("code", null, c.path));
  add("Phase", c.phase);
  add("Executor", c.executor);
  add("Model", c.model);
  add("Route", c.route);
  add("Provider", c.provider);
  add("Replayed", c.source === "journal" ? "yes: the answer came from the journal" : c.source === "live" ? "no: ran live" : undefined);
  add("Attempts", c.attempts ? String(c.attempts) : undefined);
  const retries = c.retries || [];
  add("Retries", retries.length ? retries.map((r) => time(r.at) + (r.class ? " (" + r.class + ")" : "")).join(", ") : undefined);
  add("Epoch", c.epoch !== undefined ? String(c.epoch) : undefined);
  add("Started", time(c.startedAt));
  add("Ended", time(c.endedAt));
  if (c.activity && c.status === "running") add("Last activity", activityText(c.activity, Date.now()));
  const dur = callDuration(c);
  add("Duration", dur === undefined ? undefined : duration(dur) + (c.status === "running" ? " so far" : ""));
  if (c.usage) {
    add("Tokens", tokens(c.usage) + (c.usage.cachedInputTokens ? " · " + c.usage.cachedInputTokens + " cached" : ""));
    add("Cost", cost(c.usage.costUsd));
  }
  for (const [k, v] of Object.entries(c)) {
    if (known.has(k) || v === undefined || v === null) continue;
    add(k, typeof v === "object" ? h("code", null, compact(v)) : String(v));
  }

  const sections = [];
  if (actions) sections.push(actions);
  if (c.error) sections.push(h("section", { class: "error-box" }, h("h3", null, "Error"), h("pre", { class: "text" }, c.error)));
  if (c.retryError && c.status === "running") sections.push(h("section", { class: "warn-box" }, h("h3", null, "Retrying after"), h("pre", { class: "text" }, c.retryError)));
  if (c.prompt) sections.push(h("section", null, h("h3", null, "Prompt"), h("pre", { class: "text", dataset: { field: "prompt" } }, c.prompt)));
  else if (c.promptPreview) sections.push(h("section", null, h("h3", null, "Prompt (preview)"), h("pre", { class: "text", dataset: { field: "prompt" } }, c.promptPreview)));
  else sections.push(h("section", null, h("h3", null, "Prompt"), h("p", { class: "muted" }, c.status === "running" ? "loading…" : "no prompt recorded")));
  if (c.result !== undefined) {
    sections.push(h("section", null, h("h3", null, c.kind === "checkpoint" ? "Answer" : "Result"), h("pre", { class: "text", dataset: { field: "result" } }, pretty(c.result))));
  } else if (c.resultPreview !== undefined) {
    sections.push(h("section", null, h("h3", null, "Result (preview)"), h("pre", { class: "text", dataset: { field: "result" } }, pretty(c.resultPreview))));
  } else if (c.status === "done") {
    sections.push(h("section", null, h("h3", null, "Result"), h("p", { class: "muted" }, "loading…")));
  }
  const history = (c.history && c.history.length ? c.history : c.liveHistory) || [];
  if (history.length) {
    sections.push(h("section", null, h("h3", null, "History", h("span", { class: "muted" }, " · " + history.length)),
      h("ol", { class: "history" }, history.map((it) => h("li", { class: ["hist", "hist-" + (it.kind || "message"), it.isError ? "hist-error" : null] },
        h("span", { class: "hist-who" }, [it.role, it.kind === "message" ? null : it.kind, it.name].filter(Boolean).join(" · ")),
        it.text ? h("pre", { class: "text" }, it.text) : null)))));
  }

  const close = h("button", { type: "button", class: "btn icon close", "aria-label": "Close the agent panel", on: { click: onClose } }, "×");
  return h("article", { class: "agent-panel", "aria-labelledby": "agent-title", dataset: { path: c.path } },
    h("header", { class: "panel-head" }, h("h2", { id: "agent-title", tabindex: "-1" }, title), close),
    h("dl", { class: "facts" }, rows),
    sections);
}
