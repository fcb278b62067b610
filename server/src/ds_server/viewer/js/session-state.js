// A session's state, folded from its events as docs/viewer.md and the
// sessions contract (§2 normalisation, §6 fold) say; presence and typing read
// through the expiry rule of liveness.js. Pure: no DOM, no I/O.
// Stream content is untrusted: every field is checked before it is used, and
// state lives in Maps, so no key can reach an object's prototype.

import { expiresAt, isExpired } from "./liveness.js";

const UPSERTS = new Set(["set", "insert", "update"]);
const DELETES = new Set(["remove", "delete"]);
export const ROLES = new Set(["user", "assistant", "system", "tool"]);

function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// A field from `headers` when it holds one (non-null), else from the top level.
function field(message, name) {
  const headers = message.headers;
  if (isObject(headers) && headers[name] !== undefined && headers[name] !== null) {
    return headers[name];
  }
  return message[name];
}

/** {type, key, kind, value, timestamp, control} of one stream message; kind is
 *  "upsert", "delete", "append" or null. Non-objects normalise to nothing. */
export function normalise(message) {
  if (!isObject(message)) {
    return { type: null, key: null, kind: null, value: undefined, timestamp: null, control: null };
  }
  const operation = field(message, "operation");
  let kind = null;
  if (UPSERTS.has(operation)) kind = "upsert";
  else if (DELETES.has(operation)) kind = "delete";
  else if (operation === "append") kind = "append";
  const timestamp = field(message, "timestamp");
  const control = isObject(message.headers) ? message.headers.control : undefined;
  return {
    type: typeof message.type === "string" ? message.type : null,
    key: typeof message.key === "string" ? message.key : null,
    kind,
    value: message.value,
    timestamp: typeof timestamp === "string" ? timestamp : null,
    control: typeof control === "string" ? control : null,
  };
}

function text(value) {
  return typeof value === "string" ? value : "";
}

/** The id part of "user:{id}" (the whole key when it has no such prefix). */
export function userId(key) {
  return key.startsWith("user:") ? key.slice(5) : key;
}

/** {messageKey, user, emoji} of a reaction key "reaction:{msg id}:{user id}:{emoji}";
 *  the message id may also be written as its key ("msg:{id}"). */
export function parseReactionKey(key, value) {
  const parts = key.split(":");
  if (parts[0] !== "reaction" || parts.length < 3) return null;
  let rest = parts.slice(1);
  let messageKey = `msg:${rest[0]}`;
  if (rest[0] === "msg" && rest.length >= 3) {
    messageKey = `msg:${rest[1]}`;
    rest = rest.slice(1);
  }
  const emoji = isObject(value) && typeof value.emoji === "string" ? value.emoji : rest.slice(2).join(":");
  return { messageKey, user: rest[1] ?? "", emoji };
}

export class SessionState {
  constructor() {
    this.clear();
  }

  clear() {
    /** type -> Map(key -> value) */
    this.entities = new Map();
    /** message key -> {upserts, streaming, timestamp} (what the fold itself drops) */
    this.meta = new Map();
  }

  _table(type) {
    let table = this.entities.get(type);
    if (table === undefined) {
      table = new Map();
      this.entities.set(type, table);
    }
    return table;
  }

  /** Start from a snapshot body ({"format": "ds-session-state/1", "state": {...}}). */
  loadSnapshot(snapshot) {
    this.clear();
    if (!isObject(snapshot) || !isObject(snapshot.state)) return;
    for (const [type, entries] of Object.entries(snapshot.state)) {
      if (!isObject(entries)) continue;
      const table = this._table(type);
      for (const [key, value] of Object.entries(entries)) table.set(key, value);
    }
  }

  /** Fold one message in stream order. */
  apply(message) {
    const event = normalise(message);
    if (event.control === "reset") {
      this.clear();
      return;
    }
    if (event.type === null || event.key === null || event.kind === null) return;
    if (event.kind === "upsert") {
      this._table(event.type).set(event.key, event.value === undefined ? null : event.value);
      if (event.type === "message") this._touch(event.key, event, false);
    } else if (event.kind === "delete") {
      const table = this.entities.get(event.type);
      if (table === undefined) return;
      table.delete(event.key);
      if (table.size === 0) this.entities.delete(event.type);
      if (event.type === "message") this.meta.delete(event.key);
    } else if (event.type === "chunk") {
      this._appendChunk(event);
    }
  }

  _appendChunk(event) {
    const table = this._table("message");
    const chunk = isObject(event.value) ? event.value : {};
    const current = table.get(event.key);
    if (current === undefined) {
      const role = chunk.role === undefined ? null : chunk.role;
      table.set(event.key, { role, text: text(chunk.text) });
    } else if (isObject(current)) {
      table.set(event.key, { ...current, text: text(current.text) + text(chunk.text) });
    } else {
      return; // a non-object entry is left as it is
    }
    this._touch(event.key, event, true);
  }

  _touch(key, event, streaming) {
    const meta = this.meta.get(key) ?? { upserts: 0, streaming: false, timestamp: null };
    if (!streaming) meta.upserts += 1;
    meta.streaming = streaming;
    meta.timestamp = meta.timestamp ?? event.timestamp;
    this.meta.set(key, meta);
  }

  /** The messages in order: [{key, role, text, author, edited, streaming, timestamp}]. */
  messages() {
    const table = this.entities.get("message") ?? new Map();
    return Array.from(table, ([key, value]) => {
      const body = isObject(value) ? value : {};
      const meta = this.meta.get(key) ?? { upserts: 0, streaming: false, timestamp: null };
      return {
        key,
        role: typeof body.role === "string" ? body.role : null,
        text: isObject(value) ? text(body.text) : JSON.stringify(value),
        author: typeof body.author === "string" ? body.author : null,
        edited: meta.upserts > 1,
        streaming: meta.streaming,
        timestamp: meta.timestamp,
      };
    });
  }

  /** [{user, status, online}] at `now` (ms), online users first, each group by name;
   *  an entry past its expires_at is offline. */
  presence(now = Date.now()) {
    const table = this.entities.get("presence") ?? new Map();
    const users = Array.from(table, ([key, value]) => {
      const status = isObject(value) && typeof value.status === "string" ? value.status : "online";
      return { user: userId(key), status, online: status !== "offline" && !isExpired(value, now) };
    });
    return users.sort((a, b) => Number(b.online) - Number(a.online) || a.user.localeCompare(b.user));
  }

  /** Ids of the users typing at `now` (ms), by name. */
  typing(now = Date.now()) {
    const table = this.entities.get("typing") ?? new Map();
    return Array.from(table)
      .filter(([, value]) => !isExpired(value, now))
      .map(([key]) => userId(key))
      .sort();
  }

  /** The next time after `now` (ms) a presence or typing entry expires, null when none will. */
  nextExpiry(now = Date.now()) {
    let next = null;
    for (const type of ["presence", "typing"]) {
      for (const value of (this.entities.get(type) ?? new Map()).values()) {
        const deadline = expiresAt(value);
        if (deadline !== null && deadline > now && (next === null || deadline < next)) next = deadline;
      }
    }
    return next;
  }

  /** message key -> [{emoji, users}] in the order reactions first appeared. */
  reactions() {
    const byMessage = new Map();
    const table = this.entities.get("reaction") ?? new Map();
    for (const [key, value] of table) {
      const reaction = parseReactionKey(key, value);
      if (reaction === null || reaction.emoji === "") continue;
      const emojis = byMessage.get(reaction.messageKey) ?? new Map();
      const users = emojis.get(reaction.emoji) ?? [];
      users.push(reaction.user);
      emojis.set(reaction.emoji, users);
      byMessage.set(reaction.messageKey, emojis);
    }
    const result = new Map();
    for (const [messageKey, emojis] of byMessage) {
      result.set(
        messageKey,
        Array.from(emojis, ([emoji, users]) => ({ emoji, users })),
      );
    }
    return result;
  }
}
