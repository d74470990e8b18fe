// A placeholder dashboard: lists runs and open checkpoints, refreshed on
// every event. Data is rendered with textContent only.
"use strict";
(function () {
  const token = new URLSearchParams(location.search).get("token");
  const status = document.getElementById("status");
  if (!token) return;
  const headers = { Authorization: "Bearer " + token };
  function fill(id, items, text) {
    const ul = document.getElementById(id);
    ul.replaceChildren();
    for (const item of items) {
      const li = document.createElement("li");
      li.textContent = text(item);
      ul.appendChild(li);
    }
  }
  let pending = false;
  async function refresh() {
    if (pending) return;
    pending = true;
    try {
      const res = await fetch("/api/overview", { headers });
      if (!res.ok) { status.textContent = "error " + res.status; return; }
      const ov = await res.json();
      status.textContent = ov.project.cwd + " · pid " + ov.runtime.pid;
      fill("runs", ov.runs, (r) => r.runId + " · " + r.status + " · " + r.stats.agents + " agents");
      fill("checkpoints", ov.checkpoints, (c) => c.id + " · " + c.runId + " · " + c.prompt);
    } finally {
      setTimeout(() => { pending = false; }, 300);
    }
  }
  refresh();
  const es = new EventSource("/api/events?token=" + encodeURIComponent(token));
  es.addEventListener("workflow", refresh);
  es.addEventListener("reset", refresh);
})();
