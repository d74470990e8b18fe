// Steering one agent from the dashboard, and what a run spent: the agent
// panel's Stop, Restart and Fork, and the spend against the run's dollar
// cap in the run's head and the run list. The server decides; a refused
// action says why.

import { h } from "./dom.js";
import { cost } from "./format.js";

// spend is what a run spent, against its cap when it has one:
// "$1.20 of $5.00", "$1.20", or "" for nothing.
export function spend(summary) {
  const s = (summary && summary.stats) || {};
  const limit = summary && summary.maxCostUsd;
  const spent = cost(s.costUsd) || (limit ? "$0.00" : "");
  if (!limit) return spent;
  return spent + " of " + (cost(limit) || "$" + limit) + " cap";
}

// applySpend folds a run.spend event into a run's summary.
export function applySpend(summary, p) {
  if (!summary) return;
  summary.stats = summary.stats || {};
  summary.stats.costUsd = p.costUsd;
  summary.stats.inputTokens = p.inputTokens;
  summary.stats.outputTokens = p.outputTokens;
  if (p.maxCostUsd !== undefined) summary.maxCostUsd = p.maxCostUsd;
}

function runPath(id) {
  return "/api/runs/" + encodeURIComponent(id);
}

// agentActions are the buttons of one call's panel: Stop and Restart while
// an agent runs; Fork from here once a call has ended.
export function agentActions(c, { app, runId, status }) {
  const note = h("p", { class: "cp-error", role: "alert", hidden: true });
  const fail = (what, err) => {
    note.textContent = what + " failed: " + err.message;
    note.hidden = false;
  };
  const act = (name, label) => {
    const btn = h("button", { type: "button", class: ["btn", name === "stop" ? "danger" : null], dataset: { callAction: name } }, label);
    btn.addEventListener("click", async () => {
      btn.disabled = true;
      try {
        await app.api.post(runPath(runId) + "/calls/" + name, { path: c.path });
        app.notify((name === "stop" ? "Stopped " : "Restarted ") + (c.label || c.path) + ".");
      } catch (err) {
        fail(label, err);
      } finally {
        btn.disabled = false;
      }
    });
    return btn;
  };
  const parts = [];
  if (c.kind === "agent" && c.status === "running") {
    parts.push(h("div", { class: "cp-actions" }, act("stop", "Stop agent"), act("restart", "Restart agent"),
      h("span", { class: "muted" }, "Stop: the script gets null; restart: it runs again, what it cost stays counted")));
  }
  if (c.status === "done" || c.status === "failed") parts.push(forkForm(c, { app, runId, fail }));
  if (!parts.length) return null;
  return h("section", { class: "steer", dataset: { steer: status || "" } }, h("h3", null, "Steer"), parts, note);
}

// forkForm makes a new run that replays everything before this call and
// runs it again: with the prompt as edited, or with a given answer.
function forkForm(c, { app, runId, fail }) {
  const isAgent = c.kind === "agent";
  const prompt = h("textarea", { rows: "4", class: "cp-text", "aria-label": "Prompt of the forked call", value: c.prompt || "" });
  const answer = h("textarea", { rows: "2", class: "cp-text", "aria-label": "Answer to give instead", placeholder: "JSON, or text" });
  const go = h("button", {
    type: "submit", class: "btn primary", dataset: { fork: "" },
  }, "Fork from here");
  const form = h("form", {
    class: "fork",
    on: {
      submit: async (e) => {
        e.preventDefault();
        const body = { path: c.path };
        const given = answer.value.trim();
        if (given) {
          try {
            body.answer = JSON.parse(given);
          } catch {
            body.answer = given;
          }
        } else if (isAgent && prompt.value !== (c.prompt || "")) {
          body.prompt = prompt.value;
        }
        go.disabled = true;
        try {
          const r = await app.api.post(runPath(runId) + "/fork", body);
          app.notify("Forked into " + r.runId + ".");
          location.hash = "#run=" + encodeURIComponent(r.runId);
        } catch (err) {
          fail("Fork", err);
        } finally {
          go.disabled = false;
        }
      },
    },
  },
  h("p", { class: "muted" }, "A new run replays every call before this one (nothing paid), runs this one again" + (isAgent ? " (with the prompt below)" : "") + " or takes the answer given, and goes on live."),
  isAgent ? h("label", null, "Prompt", prompt) : null,
  h("label", null, "Or give this answer", answer),
  h("div", { class: "cp-actions" }, go));
  return h("details", { class: "fork-box" }, h("summary", null, "Fork from here…"), form);
}
