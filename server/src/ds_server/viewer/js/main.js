// The session viewer: a token, a bucket's sessions, one session live, and
// any number of others followed at once in the Watching list (watch.js).
// The URL's fragment (#/{bucket}/{session}) names what is open, so a reload
// opens it again: from a fresh bootstrap, so nothing is shown twice.

import { call, describe, dsPath } from "./api.js";
import { readBootstrap } from "./bootstrap.js";
import { Follower } from "./follow.js";
import {
  PRESENCE_REFRESH_MS,
  PRESENCE_TTL_MS,
  TYPING_REFRESH_MS,
  TYPING_TTL_MS,
  deadline,
} from "./liveness.js";
import { Producer } from "./producer.js";
import { View } from "./render.js";
import { SessionState } from "./session-state.js";
import { claimsOf, fetchDevToken, storedToken, storeToken } from "./token.js";
import { Watchlist } from "./watch.js";

const DEFAULT_BUCKET = "sessions";
const TYPING_IDLE_MS = 5000;

const view = new View();
const producer = new Producer();
const watchlist = new Watchlist((entries) => {
  view.watching(entries);
  view.watchButtons(isWatched);
});
const app = {
  token: storedToken(),
  claims: null,
  devToken: null,
  bucket: DEFAULT_BUCKET,
  listCursor: null,
  open: null, // {bucket, session, path, state, follower}
  typingSentAt: 0,
  typingTimer: null,
};

function byId(id) {
  return document.getElementById(id);
}

function isWatched(bucket, session) {
  return watchlist.has(bucket, session);
}

function self() {
  return typeof app.claims?.sub === "string" ? app.claims.sub : null;
}

function fail(error) {
  view.notice(describe(error, app.claims));
}

function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean);
  const [bucket, session] = parts.map((part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  });
  return { bucket: bucket ?? null, session: session ?? null };
}

async function useToken(token) {
  app.token = token.trim();
  app.claims = claimsOf(app.token);
  storeToken(app.token);
  byId("token").value = "";
  view.identity(app.claims, app.devToken !== null);
  view.notice("");
  if (app.token === "") return;
  await listSessions(app.bucket, false);
  const { bucket, session } = route();
  if (bucket !== null && session !== null) await openSession(bucket, session);
}

async function listSessions(bucket, more) {
  app.bucket = bucket;
  byId("bucket").value = bucket;
  if (app.token === "") {
    view.notice("Enter a token first.", "info");
    return;
  }
  const query = new URLSearchParams({ limit: "200" });
  if (more && app.listCursor !== null) query.set("after", app.listCursor);
  try {
    const response = await call("GET", dsPath(bucket, undefined, `/streams?${query}`), app.token);
    const listing = await response.json();
    app.listCursor = listing.next_cursor;
    view.sessions(bucket, listing.streams, listing.has_more, more, isWatched);
  } catch (error) {
    fail(error);
  }
}

// Posts go out with the token and user the session was opened with, so a
// token changed meanwhile never posts as someone else.
function announce(open, message) {
  if (open.user === null) return Promise.resolve();
  return producer.append(open.path, open.token, message).catch((error) => {
    view.notice(`Could not post to the session: ${describe(error, claimsOf(open.token))}`);
  });
}

// Presence lasts PRESENCE_TTL_MS unless refreshed (liveness.js): a page that
// dies without saying goodbye stops showing as online by itself.
function presence(open, status) {
  const now = Date.now();
  const value = status === "offline" ? { status } : { status, expires_at: deadline(now, PRESENCE_TTL_MS) };
  return {
    type: "presence",
    key: `user:${open.user}`,
    operation: "set",
    value,
    timestamp: new Date(now).toISOString(),
  };
}

function stayPresent(open) {
  clearInterval(open.heartbeat);
  open.heartbeat = setInterval(() => announce(open, presence(open, "online")), PRESENCE_REFRESH_MS);
}

// Draw the state, and again when the next presence or typing entry expires.
function render(open) {
  clearTimeout(open.expiryTimer);
  if (app.open !== open) return;
  view.state(open.state, open.user);
  const next = open.state.nextExpiry();
  if (next !== null) open.expiryTimer = setTimeout(() => render(open), next - Date.now() + 1);
}

function leave(open) {
  open.follower?.stop();
  clearInterval(open.heartbeat);
  clearTimeout(open.expiryTimer);
  if (open.joined) {
    producer.appendOnExit(open.path, open.token, presence(open, "offline"));
  }
}

async function openSession(bucket, session) {
  if (app.open !== null) leave(app.open);
  const path = dsPath(bucket, session);
  const open = {
    bucket,
    session,
    path,
    token: app.token,
    user: self(),
    state: new SessionState(),
    follower: null,
    joined: false, // its user's presence was posted, so leaving posts "offline"
    heartbeat: null,
    expiryTimer: null,
  };
  app.open = open;
  view.openSession(bucket, session);
  if (app.token === "") {
    view.notice("Enter a token to open the session.", "info");
    view.connection("stopped");
    return;
  }
  try {
    const response = await call("GET", `${path}/bootstrap`, app.token);
    const { snapshot, messages, nextOffset } = await readBootstrap(response);
    if (app.open !== open) return; // another session was opened meanwhile
    if (snapshot !== null) open.state.loadSnapshot(snapshot);
    for (const message of messages) open.state.apply(message);
    render(open);
    view.offset(nextOffset);
    follow(open, nextOffset);
    open.joined = open.user !== null;
    if (open.joined) stayPresent(open);
    await announce(open, presence(open, "online"));
  } catch (error) {
    if (app.open !== open) return;
    view.connection("stopped");
    fail(error);
  }
}

function follow(open, offset) {
  open.follower = new Follower(open.path, open.token, offset, {
    onBatch(messages, next) {
      for (const message of messages) open.state.apply(message);
      render(open);
      view.offset(next);
    },
    onState(state) {
      if (app.open === open) view.connection(state);
    },
    onGone() {
      // The history before our offset was compacted into a snapshot: start over.
      if (app.open === open) openSession(open.bucket, open.session);
    },
    onFatal(error) {
      if (app.open === open) fail(error);
    },
  });
  open.follower.start();
}

async function post(text) {
  const open = app.open;
  if (open === null || open.user === null) return;
  const message = {
    type: "message",
    key: `msg:${crypto.randomUUID()}`,
    value: { role: "user", text, author: `user:${open.user}` },
    headers: { operation: "insert", timestamp: new Date().toISOString() },
  };
  await stopTyping(open);
  await announce(open, message);
}

function typing(open) {
  clearTimeout(app.typingTimer);
  app.typingTimer = setTimeout(() => stopTyping(open), TYPING_IDLE_MS);
  if (Date.now() - app.typingSentAt < TYPING_REFRESH_MS) return;
  app.typingSentAt = Date.now();
  const value = { expires_at: deadline(app.typingSentAt, TYPING_TTL_MS) };
  announce(open, { type: "typing", key: `user:${open.user}`, operation: "set", value });
}

function stopTyping(open) {
  clearTimeout(app.typingTimer);
  if (app.typingSentAt === 0) return Promise.resolve();
  app.typingSentAt = 0;
  return announce(open, { type: "typing", key: `user:${open.user}`, operation: "remove" });
}

function wire() {
  byId("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    useToken(byId("token").value);
  });
  byId("dev-token").addEventListener("click", () => {
    if (app.devToken !== null) useToken(app.devToken.token);
  });
  byId("bucket-form").addEventListener("submit", (event) => {
    event.preventDefault();
    listSessions(byId("bucket").value.trim() || DEFAULT_BUCKET, false);
  });
  byId("more-sessions").addEventListener("click", () => listSessions(app.bucket, true));
  byId("sessions").addEventListener("click", (event) => {
    const button = event.target.closest("button.watch");
    if (button === null || app.token === "") return;
    watchlist.toggle(button.dataset.bucket, button.dataset.watch, app.token);
  });
  byId("new-session-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const session = byId("new-session").value.trim();
    if (session === "") return;
    try {
      const headers = { "Content-Type": "application/json" };
      await call("PUT", dsPath(app.bucket, session), app.token, { headers });
      byId("new-session").value = "";
      await listSessions(app.bucket, false);
      location.hash = `#/${encodeURIComponent(app.bucket)}/${encodeURIComponent(session)}`;
    } catch (error) {
      fail(error);
    }
  });
  byId("compose").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = byId("compose-text");
    const text = input.value;
    if (text.trim() === "") return;
    input.value = "";
    post(text);
  });
  byId("compose-text").addEventListener("input", () => {
    if (app.open !== null && app.open.user !== null) typing(app.open);
  });
  window.addEventListener("hashchange", () => {
    const { bucket, session } = route();
    if (bucket !== null && bucket !== app.bucket) listSessions(bucket, false);
    if (bucket !== null && session !== null) openSession(bucket, session);
  });
  window.addEventListener("pagehide", () => {
    if (app.open !== null) leave(app.open);
    watchlist.pause();
  });
  document.addEventListener("visibilitychange", () => {
    // Timers of hidden pages are throttled: say we are here as soon as we are seen again.
    const open = app.open;
    if (document.visibilityState === "visible" && open !== null && open.joined) {
      announce(open, presence(open, "online"));
    }
  });
  window.addEventListener("pageshow", (event) => {
    // Back from the back/forward cache: pagehide stopped the live reads.
    if (!event.persisted) return;
    if (app.open !== null) openSession(app.open.bucket, app.open.session);
    watchlist.resume();
  });
}

async function start() {
  wire();
  app.claims = app.token === "" ? null : claimsOf(app.token);
  view.identity(app.claims, false);
  const { bucket, session } = route();
  app.bucket = bucket ?? DEFAULT_BUCKET;
  byId("bucket").value = app.bucket;
  app.devToken = await fetchDevToken();
  view.identity(app.claims, app.devToken !== null);
  if (app.token === "") return;
  await listSessions(app.bucket, false);
  if (session !== null) await openSession(app.bucket, session);
}

start();
