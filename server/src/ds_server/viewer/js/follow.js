// Following a stream live over SSE, resuming from the last offset on every
// reconnect.
//
// EventSource cannot send headers, so the token rides in ?access_token=
// (the gateway accepts it on GET only and strips it before the server).
// EventSource's own reconnect would reuse its first URL, and so its first
// offset, replaying what was already applied: this class closes it on any
// error and opens a new one from the offset of the last control event.
// Messages of a data event are applied only with the control event that
// follows it, so a connection lost between the two loses nothing and
// doubles nothing: the next one starts from the previous control offset.

import { ApiError, reasonOf, send } from "./api.js";
import { claimsOf } from "./token.js";

const MAX_BACKOFF_MS = 8000;

export class Follower {
  /**
   * @param {string} path      the stream, e.g. /ds/sessions/room-1
   * @param {string} token
   * @param {string} offset    where to start (a bootstrap's Stream-Next-Offset)
   * @param {object} handlers  onBatch(messages, offset), onState(state),
   *                           onGone(), onFatal(ApiError)
   */
  constructor(path, token, offset, handlers) {
    this.path = path;
    this.token = token;
    this.offset = offset;
    this.handlers = handlers;
    this.source = null;
    this.timer = null;
    this.failures = 0;
    this.stopped = false;
  }

  start() {
    this._connect();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.source?.close();
    this.source = null;
  }

  _url() {
    const query = new URLSearchParams({
      offset: this.offset,
      live: "sse",
      access_token: this.token,
    });
    return `${this.path}?${query}`;
  }

  _connect() {
    if (this.stopped) return;
    this.handlers.onState(this.failures === 0 ? "connecting" : "reconnecting");
    const source = new EventSource(this._url());
    this.source = source;
    let pending = [];
    source.addEventListener("data", (event) => {
      const batch = JSON.parse(event.data);
      pending = pending.concat(Array.isArray(batch) ? batch : [batch]);
    });
    source.addEventListener("control", (event) => {
      const control = JSON.parse(event.data);
      const messages = pending;
      pending = [];
      if (typeof control.streamNextOffset === "string") this.offset = control.streamNextOffset;
      this.failures = 0;
      this.handlers.onBatch(messages, this.offset);
      if (control.streamClosed === true) {
        this.stop();
        this.handlers.onState("closed");
      } else {
        this.handlers.onState(control.upToDate ? "live" : "catching up");
      }
    });
    source.addEventListener("error", () => {
      if (this.source !== source) return;
      // CLOSED: the answer was not an event stream (401, 404, 410...);
      // CONNECTING: the stream ended (the server ends each after a while) or the network failed.
      const refused = source.readyState === EventSource.CLOSED;
      source.close();
      this.source = null;
      if (this.stopped) return;
      if (refused) {
        this._diagnose();
      } else {
        this._retry();
      }
    });
  }

  _retry() {
    const delay =
      this.failures === 0 ? 0 : Math.min(MAX_BACKOFF_MS, 250 * 2 ** (this.failures - 1));
    this.failures += 1;
    this.handlers.onState("reconnecting");
    this.timer = setTimeout(() => this._connect(), delay * (0.75 + Math.random() / 2));
  }

  // EventSource hides why it was refused: ask again with a plain request.
  async _diagnose() {
    // The server refuses live reads once the token's exp has passed, while the
    // gateway still lets other requests through for its clock skew.
    const exp = claimsOf(this.token)?.exp;
    if (typeof exp === "number" && exp <= Date.now() / 1000) {
      this.stop();
      this.handlers.onState("stopped");
      this.handlers.onFatal(new ApiError(401, "the token has expired"));
      return;
    }
    let status = 0;
    let reason = "";
    try {
      const query = new URLSearchParams({ offset: this.offset });
      const response = await send("HEAD", `${this.path}?${query}`, this.token);
      status = response.status;
      reason = status === 401 ? await this._reasonFromGet() : response.statusText;
    } catch {
      // the network is down: keep trying
    }
    if (this.stopped) return;
    if (status === 410) {
      this.stop();
      this.handlers.onGone();
    } else if ([400, 401, 403, 404].includes(status)) {
      this.stop();
      this.handlers.onState("stopped");
      this.handlers.onFatal(new ApiError(status, reason || `HTTP ${status}`));
    } else {
      this._retry();
    }
  }

  // A HEAD answer has no body; the gateway's reason for a 401 is in a GET's.
  async _reasonFromGet() {
    const query = new URLSearchParams({ offset: "now" });
    const response = await send("GET", `${this.path}?${query}`, this.token);
    return reasonOf(response);
  }
}
