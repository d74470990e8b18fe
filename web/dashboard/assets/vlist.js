// A windowed list: of a phase's agents only the rows near the viewport
// exist in the DOM, so a 1,000-agent run costs a few dozen elements. Rows
// have one height (the CSS variable --row-h) and are placed with
// transforms; the page scrolls as a whole, and each list works out from
// its own position which rows are on screen.

const overscan = 8;

export class VirtualList {
  // createRow() makes an empty row element (focusable: a button), and
  // renderRow(el, item) fills it. Arrow keys, Page Up/Down, Home and End
  // move the focus between rows.
  constructor({ className, label, renderRow, createRow }) {
    this.items = [];
    this.renderRow = renderRow;
    this.createRow = createRow;
    this.rows = new Map(); // index -> element
    this.el = document.createElement("div");
    this.el.className = "vlist " + (className || "");
    if (label) {
      this.el.setAttribute("role", "group");
      this.el.setAttribute("aria-label", label);
    }
    this.el.addEventListener("keydown", (e) => this.key(e));
    this.rowHeight = 0;
  }

  setItems(items) {
    this.items = items;
    for (const [i, row] of this.rows) {
      if (i >= items.length) {
        row.remove();
        this.rows.delete(i);
      }
    }
    this.update(true);
  }

  // height is the row height, --row-h in px. It can be read only once the
  // list is in the document; until then a guess stands in.
  height() {
    if (!this.rowHeight) {
      const v = parseFloat(getComputedStyle(this.el).getPropertyValue("--row-h"));
      if (v > 0) this.rowHeight = v;
      else return 40;
    }
    return this.rowHeight;
  }

  // relayout re-reads the row height, which media queries change.
  relayout() {
    this.rowHeight = 0;
    this.update(false);
  }

  // place sizes the list and puts the rows where they belong, when the
  // row height or the number of rows changed.
  place() {
    const rh = this.height();
    const key = rh + "x" + this.items.length;
    if (this.placed === key) return;
    this.placed = key;
    this.el.style.height = this.items.length * rh + "px";
    for (const [i, row] of this.rows) row.style.transform = "translateY(" + i * rh + "px)";
  }

  // window is the range of rows on screen, with some to spare.
  window() {
    const r = this.el.getBoundingClientRect();
    const rh = this.height();
    if (r.height === 0 || r.bottom < 0 || r.top > innerHeight) return [0, -1];
    const first = Math.max(0, Math.floor(-r.top / rh) - overscan);
    const last = Math.min(this.items.length - 1, Math.ceil((innerHeight - r.top) / rh) + overscan);
    return [first, last];
  }

  // update creates the rows that came into view and drops those that
  // left it. all re-renders the rows that stay, for changed items.
  update(all) {
    this.place();
    const [first, last] = this.window();
    const focused = document.activeElement;
    for (const [i, row] of this.rows) {
      if ((i < first || i > last) && row !== focused) {
        row.remove();
        this.rows.delete(i);
      }
    }
    const rh = this.height();
    for (let i = first; i <= last; i++) {
      let row = this.rows.get(i);
      if (!row) {
        row = this.createRow();
        row.dataset.index = i;
        row.style.transform = "translateY(" + i * rh + "px)";
        this.rows.set(i, row);
        this.renderRow(row, this.items[i]);
        this.el.appendChild(row);
      } else if (all) {
        this.renderRow(row, this.items[i]);
      }
    }
  }

  // refresh re-renders the rows of the given items that exist.
  refresh(items) {
    for (const [i, row] of this.rows) {
      if (items.has(this.items[i])) this.renderRow(row, this.items[i]);
    }
  }

  indexOf(item) {
    return this.items.indexOf(item);
  }

  // focusIndex scrolls row i into view and focuses it.
  focusIndex(i) {
    if (i < 0 || i >= this.items.length) return false;
    const rh = this.height();
    const top = this.el.getBoundingClientRect().top + i * rh;
    if (top < 60) scrollBy(0, top - 60);
    else if (top + rh > innerHeight - 8) scrollBy(0, top + rh - innerHeight + 8);
    this.update(false);
    const row = this.rows.get(i);
    if (row) row.focus();
    return !!row;
  }

  key(e) {
    const row = e.target.closest("[data-index]");
    if (!row || row.parentElement !== this.el) return;
    const i = Number(row.dataset.index);
    let to = -1;
    switch (e.key) {
      case "ArrowDown": to = i + 1; break;
      case "ArrowUp": to = i - 1; break;
      case "PageDown": to = Math.min(this.items.length - 1, i + Math.floor(innerHeight / this.height()) - 1); break;
      case "PageUp": to = Math.max(0, i - Math.floor(innerHeight / this.height()) + 1); break;
      case "Home": to = 0; break;
      case "End": to = this.items.length - 1; break;
      default: return;
    }
    e.preventDefault();
    this.focusIndex(to);
  }
}
