// Posting to a session as an idempotent producer (protocol §5.2.1): a retry
// after a lost response carries the same (id, epoch, seq), so the server
// keeps the message once. The id is stable per tab (sessionStorage); each
// page load starts a new epoch, which fences any request of the previous load
// still in flight. Posts go one at a time, so sequence numbers never race.

import { ApiError, reasonOf, send } from "./api.js";

const PRODUCER_KEY = "ds-viewer:producer";
const RETRIES = 4;

function loadIdentity() {
  try {
    const saved = JSON.parse(sessionStorage.getItem(PRODUCER_KEY) ?? "null");
    if (typeof saved?.id === "string" && Number.isInteger(saved?.epoch)) return saved;
  } catch {
    // a damaged entry: start afresh
  }
  return { id: `viewer-${crypto.randomUUID()}`, epoch: -1 };
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class Producer {
  constructor() {
    const saved = loadIdentity();
    this.id = saved.id;
    this._claim(saved.epoch + 1);
    this._queue = Promise.resolve();
  }

  _claim(epoch) {
    this.epoch = epoch;
    this.seqs = new Map(); // stream path -> next seq in this epoch
    sessionStorage.setItem(PRODUCER_KEY, JSON.stringify({ id: this.id, epoch }));
  }

  _headers(seq) {
    return {
      "Content-Type": "application/json",
      "Producer-Id": this.id,
      "Producer-Epoch": String(this.epoch),
      "Producer-Seq": String(seq),
    };
  }

  _take(path) {
    const seq = this.seqs.get(path) ?? 0;
    this.seqs.set(path, seq + 1);
    return seq;
  }

  /** Append one JSON message; resolves once the server has it, in call order. */
  append(path, token, message) {
    const body = JSON.stringify(message);
    const result = this._queue.then(() => this._send(path, token, body));
    this._queue = result.catch(() => {});
    return result;
  }

  async _send(path, token, body) {
    let seq = this._take(path);
    for (let attempt = 0; ; attempt += 1) {
      let response;
      try {
        response = await send("POST", path, token, { headers: this._headers(seq), body });
      } catch (error) {
        // Lost on the way, or its answer was: the same seq again is safe.
        if (attempt >= RETRIES) throw error;
        await sleep(250 * 2 ** attempt);
        continue;
      }
      if (response.ok) return; // 200 appended, 204 already there
      const fenced = response.status === 403 && response.headers.has("producer-epoch");
      const gap = response.status === 409 && response.headers.has("producer-expected-seq");
      if ((fenced || gap) && attempt < RETRIES) {
        // Another holder of this id (a duplicated tab) moved on: claim a newer epoch.
        const current = Number(response.headers.get("producer-epoch") ?? this.epoch);
        this._claim(Math.max(current, this.epoch) + 1);
        seq = this._take(path);
        continue;
      }
      throw new ApiError(response.status, await reasonOf(response));
    }
  }

  /** Best effort while the page goes away: sent with keepalive, not awaited. */
  appendOnExit(path, token, message) {
    const seq = this._take(path);
    send("POST", path, token, {
      headers: this._headers(seq),
      body: JSON.stringify(message),
      keepalive: true,
    }).catch(() => {});
  }
}
