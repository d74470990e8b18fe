// Building DOM without HTML: every string becomes a text node or an
// attribute value, so text from agents and scripts can never become markup.

// h creates an element. attrs holds attributes, plus these specials:
// class (a string or a list), dataset (an object), on (event name to
// handler), and the properties value, checked, disabled, hidden. Children
// are nodes, strings (text nodes), or nested lists; null and false are
// skipped.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      switch (k) {
        case "class":
          el.className = Array.isArray(v) ? v.filter(Boolean).join(" ") : v;
          break;
        case "dataset":
          Object.assign(el.dataset, v);
          break;
        case "on":
          for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
          break;
        case "value":
        case "checked":
        case "disabled":
        case "hidden":
          el[k] = v;
          break;
        case "style":
          throw new Error("h: inline styles are not allowed by the page's CSP; use a class");
        default:
          el.setAttribute(k, v === true ? "" : String(v));
      }
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// setText sets an element's text if it changed: writing the same text
// again still costs a layout.
export function setText(el, text) {
  const s = text === null || text === undefined ? "" : String(text);
  if (el.textContent !== s) el.textContent = s;
}

// replace swaps the children of el.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
}
