// The runtime's HTTP API as the dashboard uses it. The token goes in the
// Authorization header of every request, the event stream included: it is
// read with fetch rather than EventSource, which can only send it in the
// URL, where request lines and logs would keep it.

class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export class API {
  // onUnauthorized is called when the server refuses the token.
  constructor(token, onUnauthorized) {
    this.token = token;
    this.onUnauthorized = onUnauthorized;
  }

  // The Accept type asks for the API's own representations; without it
  // the routes the Node runtime also defines answer in its shapes.
  headers(extra) {
    return Object.assign({ Authorization: "Bearer " + this.token, Accept: "application/vnd.dynworkflow+json" }, extra);
  }

  async request(method, path, body) {
    const init = { method, headers: this.headers(), cache: "no-store" };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(path, init);
    } catch (err) {
      throw new APIError(0, "offline", "the runtime does not answer (" + err.message + ")");
    }
    if (res.status === 401) this.onUnauthorized();
    if (!res.ok) {
      let code = "http_" + res.status, message = res.status + " " + res.statusText;
      try {
        const b = await res.json();
        if (b && b.error) {
          code = b.error.code || code;
          message = b.error.message || message;
        }
      } catch {
        // not JSON: keep the status line
      }
      throw new APIError(res.status, code, message);
    }
    return res.json();
  }

  get(path) { return this.request("GET", path); }
  post(path, body) { return this.request("POST", path, body === undefined ? {} : body); }
  del(path) { return this.request("DELETE", path); }

  overview() { return this.get("/api/overview"); }
  run(id) { return this.get("/api/runs/" + encodeURIComponent(id)); }
  action(id, name) {
    if (name === "delete") return this.del("/api/runs/" + encodeURIComponent(id));
    return this.post("/api/runs/" + encodeURIComponent(id) + "/" + name);
  }
  respond(checkpointId, value) {
    return this.post("/api/checkpoints/" + encodeURIComponent(checkpointId) + "/respond", { value });
  }
}

// EventStream reads GET /api/events and reconnects until closed. On every
// connection it calls onOpen, so the caller can rebuild from the overview:
// events are a live acceleration, and some may have been missed while the
// stream was down (or the server restarted). It resumes after the last
// event id with Last-Event-ID, so the server replays what it still has.
export class EventStream {
  constructor(api, { since, onEvent, onOpen, onDown }) {
    this.api = api;
    this.since = since;
    this.onEvent = onEvent;
    this.onOpen = onOpen;
    this.onDown = onDown;
    this.lastId = "";
    this.retry = 1000;
    this.failures = 0;
    this.closed = false;
    this.abort = null;
    this.loop();
  }

  close() {
    this.closed = true;
    if (this.abort) this.abort.abort();
  }

  async loop() {
    while (!this.closed) {
      let reason = "";
      try {
        await this.connect();
        reason = "the stream ended";
      } catch (err) {
        if (this.closed) return;
        reason = err.message || String(err);
      }
      if (this.closed) return;
      this.failures++;
      const wait = Math.min(this.retry * Math.min(this.failures, 5), 10000);
      this.onDown(reason, wait);
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  async connect() {
    this.abort = new AbortController();
    const extra = { Accept: "text/event-stream, application/vnd.dynworkflow+json" };
    let path = "/api/events";
    if (this.lastId) extra["Last-Event-ID"] = this.lastId;
    else if (this.since !== undefined && this.since !== null) path += "?since=" + encodeURIComponent(this.since);
    const res = await fetch(path, { headers: this.api.headers(extra), cache: "no-store", signal: this.abort.signal });
    if (res.status === 401) {
      this.api.onUnauthorized();
      this.closed = true;
      return;
    }
    if (!res.ok || !res.body) throw new Error("the event stream answered " + res.status);
    this.failures = 0;
    this.onOpen();
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "", data = [], event = "", id = null;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value;
      let nl;
      while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + (buf[nl] === "\r" && buf[nl + 1] === "\n" ? 2 : 1));
        if (line === "") {
          if (id !== null) this.lastId = id;
          if (data.length) this.dispatch(event || "message", data.join("\n"));
          data = [];
          event = "";
          id = null;
          continue;
        }
        if (line[0] === ":") continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let val = colon < 0 ? "" : line.slice(colon + 1);
        if (val[0] === " ") val = val.slice(1);
        if (field === "data") data.push(val);
        else if (field === "event") event = val;
        else if (field === "id") id = val;
        else if (field === "retry" && /^\d+$/.test(val)) this.retry = Math.max(250, Number(val));
      }
    }
  }

  dispatch(name, text) {
    let ev;
    try {
      ev = JSON.parse(text);
    } catch {
      return;
    }
    if (name === "reset") ev = { type: "reset" };
    this.onEvent(ev);
  }
}
