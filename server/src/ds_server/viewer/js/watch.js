// Sessions followed at once, beside the open one: each its own bootstrap and
// live read (an EventSource), folded into its own state, shown as a line with
// its connection state, message count and latest message.
//
// Many live reads from one page are what HTTP/2 is for: over HTTP/1.1 a
// browser opens at most six connections to a host, so a page following more
// than six sessions starves (docs/viewer.md). Over TLS the gateway speaks h2
// and every read shares one connection.

import { call, describe, dsPath } from "./api.js";
import { readBootstrap } from "./bootstrap.js";
import { Follower } from "./follow.js";
import { SessionState } from "./session-state.js";

export class Watchlist {
  /** @param {function} onChange  called with the entries (see `entries`) after every change */
  constructor(onChange) {
    this.watched = new Map(); // "bucket/session" -> entry
    this.onChange = onChange;
  }

  has(bucket, session) {
    return this.watched.has(`${bucket}/${session}`);
  }

  toggle(bucket, session, token) {
    if (this.has(bucket, session)) this.remove(bucket, session);
    else this.add(bucket, session, token);
  }

  async add(bucket, session, token) {
    const key = `${bucket}/${session}`;
    if (this.watched.has(key)) return;
    const entry = {
      key,
      bucket,
      session,
      path: dsPath(bucket, session),
      token,
      state: new SessionState(),
      connection: "connecting",
      offset: "",
      problem: "",
      follower: null,
      stopped: false,
    };
    this.watched.set(key, entry);
    this._changed();
    try {
      const response = await call("GET", `${entry.path}/bootstrap`, token);
      const { snapshot, messages, nextOffset } = await readBootstrap(response);
      if (entry.stopped) return;
      if (snapshot !== null) entry.state.loadSnapshot(snapshot);
      for (const message of messages) entry.state.apply(message);
      entry.offset = nextOffset;
      this._follow(entry);
    } catch (error) {
      if (entry.stopped) return;
      entry.connection = "stopped";
      entry.problem = describe(error, null);
    }
    this._changed();
  }

  remove(bucket, session) {
    const entry = this.watched.get(`${bucket}/${session}`);
    if (entry === undefined) return;
    entry.stopped = true;
    entry.follower?.stop();
    this.watched.delete(entry.key);
    this._changed();
  }

  /** Stop every live read (the page is going away); the list is kept for a return. */
  pause() {
    for (const entry of this.watched.values()) entry.follower?.stop();
  }

  /** Follow again from where each one was (back from the back/forward cache). */
  resume() {
    for (const entry of this.watched.values()) {
      if (!entry.stopped && entry.follower !== null) this._follow(entry);
    }
  }

  /** {key, bucket, session, connection, offset, count, last, problem} per watched session. */
  entries() {
    return [...this.watched.values()].map((entry) => {
      const messages = entry.state.messages();
      const last = messages.length ? messages[messages.length - 1] : null;
      return {
        key: entry.key,
        bucket: entry.bucket,
        session: entry.session,
        connection: entry.connection,
        offset: entry.offset,
        count: messages.length,
        last: last === null ? "" : last.text,
        problem: entry.problem,
      };
    });
  }

  _follow(entry) {
    entry.follower = new Follower(entry.path, entry.token, entry.offset, {
      onBatch: (messages, next) => {
        for (const message of messages) entry.state.apply(message);
        entry.offset = next;
        this._changed();
      },
      onState: (state) => {
        entry.connection = state;
        this._changed();
      },
      onGone: () => {
        // History before our offset became a snapshot: start this one over.
        const { bucket, session, token } = entry;
        this.remove(bucket, session);
        this.add(bucket, session, token);
      },
      onFatal: (error) => {
        entry.problem = describe(error, null);
        this._changed();
      },
    });
    entry.follower.start();
  }

  _changed() {
    this.onChange(this.entries());
  }
}
