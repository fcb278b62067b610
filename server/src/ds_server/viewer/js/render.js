// Drawing the session. Everything from the stream is untrusted: it reaches
// the page only as textContent or a data-* attribute, never as HTML.

import { ROLES } from "./session-state.js";

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function byId(id) {
  return document.getElementById(id);
}

function clockTime(timestamp) {
  const date = new Date(timestamp ?? "");
  return Number.isNaN(date.getTime()) ? "" : date.toLocaleTimeString();
}

/** Show `items` in `list` in order, one node per key: new keys get a node
 *  from `create`, every node is refreshed by `update`, gone keys are removed. */
function reconcile(list, nodes, items, create, update) {
  const seen = new Set();
  let previous = null;
  for (const item of items) {
    let node = nodes.get(item.key);
    if (node === undefined) {
      node = create(item);
      nodes.set(item.key, node);
    }
    update(node, item);
    const expected = previous === null ? list.firstChild : previous.nextSibling;
    if (expected !== node) list.insertBefore(node, expected);
    previous = node;
    seen.add(item.key);
  }
  for (const [key, node] of nodes) {
    if (!seen.has(key)) {
      node.remove();
      nodes.delete(key);
    }
  }
}

function createMessage() {
  const item = element("li", "message");
  const head = element("div", "message-head");
  head.append(element("span", "author"), element("span", "role"), element("time", "time"));
  head.append(element("span", "edited", "edited"));
  item.append(head, element("div", "text"), element("div", "reactions"));
  return item;
}

function updateMessage(node, message, reactions) {
  node.dataset.key = message.key;
  node.dataset.role = ROLES.has(message.role) ? message.role : "other";
  node.dataset.streaming = String(message.streaming);
  node.dataset.edited = String(message.edited);
  const author = message.author ?? message.role ?? "unknown";
  node.querySelector(".author").textContent = author.startsWith("user:") ? author.slice(5) : author;
  node.querySelector(".role").textContent = message.role ?? "";
  node.querySelector(".time").textContent = clockTime(message.timestamp);
  const text = node.querySelector(".text");
  if (text.textContent !== message.text) text.textContent = message.text;
  const chips = node.querySelector(".reactions");
  chips.replaceChildren(
    ...(reactions ?? []).map(({ emoji, users }) => {
      const chip = element("span", "reaction", `${emoji} ${users.length}`);
      chip.title = users.join(", ");
      return chip;
    }),
  );
}

function createWatched() {
  const item = element("li", "watched");
  const head = element("div", "watched-head");
  head.append(element("span", "name"), element("span", "state"));
  item.append(head, element("div", "last"), element("div", "detail"));
  return item;
}

function updateWatched(node, entry) {
  node.dataset.session = entry.key;
  node.dataset.state = entry.connection;
  node.dataset.count = String(entry.count);
  node.querySelector(".name").textContent = entry.session;
  node.querySelector(".state").textContent = entry.connection;
  const last = node.querySelector(".last");
  if (last.textContent !== entry.last) last.textContent = entry.last;
  const count = `${entry.count} message${entry.count === 1 ? "" : "s"}`;
  node.querySelector(".detail").textContent = entry.problem || `${count}, offset ${entry.offset}`;
}

export class View {
  constructor() {
    this.messageNodes = new Map();
    this.presenceNodes = new Map();
    this.sessionNodes = new Map();
    this.watchedNodes = new Map();
  }

  notice(text, kind = "error") {
    const notice = byId("notice");
    notice.textContent = text;
    notice.dataset.kind = kind;
    notice.hidden = text === "";
  }

  identity(claims, devOffered) {
    byId("dev-token").hidden = !devOffered;
    const who = byId("identity");
    if (claims === null) {
      who.textContent = "No token yet.";
      return;
    }
    const expires =
      typeof claims.exp === "number" ? `, expires ${new Date(claims.exp * 1000).toLocaleString()}` : "";
    who.textContent = `Signed in as ${claims.sub ?? "(no sub)"}${expires}`;
  }

  sessions(bucket, rows, hasMore, append, watched) {
    const list = byId("sessions");
    if (!append) {
      list.replaceChildren();
      this.sessionNodes.clear();
    }
    for (const row of rows) {
      const item = element("li");
      const link = element("a", "session-link", row.stream_id);
      link.href = `#/${encodeURIComponent(bucket)}/${encodeURIComponent(row.stream_id)}`;
      link.dataset.session = row.stream_id;
      const watch = element("button", "watch", "☆");
      watch.type = "button";
      watch.title = "Follow this session in the Watching list too";
      watch.dataset.bucket = bucket;
      watch.dataset.watch = row.stream_id;
      watch.setAttribute("aria-pressed", String(watched(bucket, row.stream_id)));
      const detail = `${row.content_type}, ${row.tail_offset} bytes`;
      const line = element("div", "session-line");
      line.append(link, watch);
      item.append(line, element("span", "detail", detail));
      list.append(item);
    }
    byId("more-sessions").hidden = !hasMore;
    byId("sessions-empty").hidden = list.childElementCount > 0;
  }

  /** The watch buttons' state, after the list of watched sessions changed. */
  watchButtons(watched) {
    for (const button of byId("sessions").querySelectorAll("button.watch")) {
      const pressed = watched(button.dataset.bucket, button.dataset.watch);
      button.setAttribute("aria-pressed", String(pressed));
      button.textContent = pressed ? "★" : "☆";
    }
  }

  watching(entries) {
    reconcile(byId("watching"), this.watchedNodes, entries, createWatched, updateWatched);
    byId("watching-empty").hidden = entries.length > 0;
    const live = entries.filter((entry) => entry.connection === "live").length;
    byId("watching-count").textContent = entries.length ? `${live} of ${entries.length} live` : "";
  }

  openSession(bucket, session) {
    byId("session").hidden = false;
    byId("session-title").textContent = `${bucket} / ${session}`;
    byId("messages").replaceChildren();
    byId("presence").replaceChildren();
    this.messageNodes.clear();
    this.presenceNodes.clear();
    this.connection("connecting");
    this.offset("");
  }

  closeSession() {
    byId("session").hidden = true;
  }

  connection(state) {
    const node = byId("connection");
    node.textContent = state;
    node.dataset.state = state;
  }

  offset(offset) {
    byId("offset").textContent = offset;
  }

  state(state, self) {
    const reactions = state.reactions();
    reconcile(byId("messages"), this.messageNodes, state.messages(), createMessage, (node, m) =>
      updateMessage(node, m, reactions.get(m.key)),
    );
    const people = state.presence().map((p) => ({ ...p, key: p.user }));
    reconcile(
      byId("presence"),
      this.presenceNodes,
      people,
      () => element("li", "person"),
      (node, person) => {
        node.dataset.user = person.user;
        node.dataset.online = String(person.online);
        node.textContent = person.user === self ? `${person.user} (you)` : person.user;
        node.title = person.status;
      },
    );
    const typing = state.typing().filter((user) => user !== self);
    const verb = typing.length === 1 ? "is" : "are";
    byId("typing").textContent = typing.length ? `${typing.join(", ")} ${verb} typing…` : "";
  }
}
