// Checkpoints as forms: a confirm is two buttons, a text question a text
// box, a select a group of radio buttons. The answer goes to
// POST /api/checkpoints/<id>/respond, which checks it; a question someone
// answered elsewhere in the meantime is gone (404) and its form goes too.

import { h } from "./dom.js";
import { time } from "./format.js";

// checkpointForm renders cp. onGone(cp) is called once it is answered
// here or found answered elsewhere; withRun adds a link to its run.
export function checkpointForm(cp, { api, onGone, withRun }) {
  const error = h("p", { class: "cp-error", role: "alert", hidden: true });
  const busy = (on) => {
    for (const el of form.querySelectorAll("button, input, textarea")) el.disabled = on;
  };
  const send = async (value) => {
    error.hidden = true;
    busy(true);
    try {
      await api.respond(cp.id, value);
      form.classList.add("answered");
      onGone(cp, "answered");
    } catch (err) {
      busy(false);
      if (err.status === 404) {
        onGone(cp, "answered elsewhere");
        return;
      }
      error.textContent = err.message;
      error.hidden = false;
    }
  };

  const idBase = cp.id;
  const head = h("div", { class: "cp-head" },
    h("span", { class: "cp-kind" }, cp.kind),
    withRun ? h("a", { href: "#run=" + encodeURIComponent(cp.runId), class: "cp-run" }, cp.runId) : null,
    h("span", { class: "cp-when" }, "asked " + time(cp.createdAt)));
  const prompt = h("p", { class: "cp-prompt", id: idBase + "-prompt" }, cp.prompt);
  let controls;
  const dflt = cp.default;

  const form = h("form", {
    class: "checkpoint", "aria-labelledby": idBase + "-prompt", dataset: { checkpoint: cp.id, kind: cp.kind },
    on: { submit: (e) => { e.preventDefault(); submit(); } },
  });

  let submit = () => {};
  switch (cp.kind) {
    case "confirm": {
      const yes = h("button", { type: "button", class: ["btn", dflt === true ? "primary" : null], dataset: { answer: "yes" }, on: { click: () => send(true) } }, "Yes");
      const no = h("button", { type: "button", class: ["btn", dflt === false ? "primary" : null], dataset: { answer: "no" }, on: { click: () => send(false) } }, "No");
      controls = h("div", { class: "cp-actions" }, yes, no,
        dflt === true || dflt === false ? h("span", { class: "muted" }, "default: " + (dflt ? "yes" : "no")) : null);
      break;
    }
    case "select": {
      const choices = cp.choices || [];
      const name = idBase + "-choice";
      const fieldset = h("fieldset", { class: "cp-choices" },
        h("legend", { class: "sr-only" }, "Choose one"),
        choices.map((c, i) => h("label", { class: "cp-choice" },
          h("input", { type: "radio", name, value: String(i), checked: dflt === c || (dflt === undefined && i === 0) }),
          h("span", null, c))));
      submit = () => {
        const picked = form.querySelector("input[name='" + CSS.escape(name) + "']:checked");
        if (!picked) {
          error.textContent = "Choose one of the answers first.";
          error.hidden = false;
          return;
        }
        send(choices[Number(picked.value)]);
      };
      controls = h("div", null, fieldset, h("div", { class: "cp-actions" }, h("button", { type: "submit", class: "btn primary" }, "Answer")));
      break;
    }
    default: {
      const input = h("textarea", { rows: "2", class: "cp-text", "aria-labelledby": idBase + "-prompt", value: typeof dflt === "string" ? dflt : "" });
      input.addEventListener("keydown", (e) => {
        if (e.key === "Enter" && !e.shiftKey) {
          e.preventDefault();
          submit();
        }
      });
      submit = () => send(input.value);
      controls = h("div", null, input, h("div", { class: "cp-actions" },
        h("button", { type: "submit", class: "btn primary" }, "Answer"),
        h("span", { class: "muted" }, "Enter sends, Shift+Enter adds a line")));
    }
  }
  form.append(head, prompt, controls, error);
  return form;
}
