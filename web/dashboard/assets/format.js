// Formatting numbers, times and values for people.

export function duration(ms) {
  if (ms === null || ms === undefined || !isFinite(ms) || ms < 0) return "";
  if (ms < 1000) return Math.round(ms) + " ms";
  const s = ms / 1000;
  if (s < 60) return (s < 10 ? s.toFixed(1) : Math.round(s)) + " s";
  const m = Math.floor(s / 60);
  if (m < 60) return m + " m " + String(Math.floor(s % 60)).padStart(2, "0") + " s";
  const hrs = Math.floor(m / 60);
  if (hrs < 48) return hrs + " h " + String(m % 60).padStart(2, "0") + " m";
  return Math.floor(hrs / 24) + " d " + (hrs % 24) + " h";
}

export function count(n) {
  if (!n) return "0";
  if (n < 1000) return String(n);
  if (n < 1e6) return (n / 1e3).toFixed(n < 1e4 ? 1 : 0) + "k";
  return (n / 1e6).toFixed(n < 1e7 ? 1 : 0) + "M";
}

export function cost(usd) {
  if (!usd) return "";
  if (usd < 0.01) return "<$0.01";
  return "$" + usd.toFixed(usd < 10 ? 2 : 0);
}

export function tokens(u) {
  if (!u) return "";
  const input = (u.inputTokens || 0), output = (u.outputTokens || 0);
  if (!input && !output) return "";
  return count(input) + " in · " + count(output) + " out";
}

// time is a timestamp as a local time, with the date when it is not today.
export function time(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  if (isNaN(d)) return String(iso);
  const now = new Date();
  const t = d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  if (d.toDateString() === now.toDateString()) return t;
  return d.toLocaleDateString(undefined, { month: "short", day: "numeric" }) + " " + t;
}

// pretty renders a JSON value for reading: a string as itself, anything
// else indented.
export function pretty(v) {
  if (v === undefined) return "";
  if (typeof v === "string") return v;
  try {
    return JSON.stringify(v, null, 2);
  } catch {
    return String(v);
  }
}

// compact renders a JSON value on one line.
export function compact(v) {
  if (typeof v === "string") return v;
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

// comparePaths orders call paths as the engine does: segment by segment,
// digit runs compared as numbers, so /par.0/2 comes before /par.0/10.
export function comparePaths(a, b) {
  const as = a.split("/"), bs = b.split("/");
  for (let i = 0; i < as.length && i < bs.length; i++) {
    if (as[i] !== bs[i]) return compareNatural(as[i], bs[i]);
  }
  return as.length - bs.length;
}

const digits = /^\d+/;

function compareNatural(a, b) {
  while (a && b) {
    const da = digits.exec(a), db = digits.exec(b);
    if (da && db) {
      const na = da[0].replace(/^0+/, ""), nb = db[0].replace(/^0+/, "");
      if (na.length !== nb.length) return na.length - nb.length;
      if (na !== nb) return na < nb ? -1 : 1;
      a = a.slice(da[0].length);
      b = b.slice(db[0].length);
      continue;
    }
    if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
    a = a.slice(1);
    b = b.slice(1);
  }
  return a.length - b.length;
}

// statusClass maps a status to the class that colours it; unknown
// statuses get a neutral colour and keep their own name as text.
export function statusClass(s) {
  switch (s) {
    case "running": case "completed": case "paused": case "failed": case "stopped":
    case "done": case "waiting": case "replayed":
      return "st-" + s;
    default:
      return "st-other";
  }
}
