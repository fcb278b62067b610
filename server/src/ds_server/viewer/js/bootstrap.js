// GET {stream}/bootstrap: a multipart/mixed body, the snapshot (or an empty
// part) first, then one part per retained message (extensions spec, §3).

/** The boundary parameter of a multipart Content-Type, or null. */
export function boundaryOf(contentType) {
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? "");
  return match === null ? null : (match[1] ?? match[2]);
}

/** The parts of a multipart body: [{contentType, body}] (bodies as text).
 *  Text is safe to split on: the boundary is ASCII, and no UTF-8 multi-byte
 *  sequence contains an ASCII byte. */
export function parseMultipart(text, boundary) {
  const delimiter = `--${boundary}`;
  const parts = [];
  let position = 0;
  if (!text.startsWith(delimiter)) {
    // After a preamble, the first delimiter follows a CRLF.
    const found = text.indexOf(`\r\n${delimiter}`);
    if (found < 0) throw new Error("bootstrap: no multipart delimiter");
    position = found + 2;
  }
  for (;;) {
    position += delimiter.length;
    if (text.startsWith("--", position)) return parts; // the close delimiter
    const lineEnd = text.indexOf("\r\n", position);
    if (lineEnd < 0) throw new Error("bootstrap: truncated part");
    const start = lineEnd + 2;
    const next = text.indexOf(`\r\n${delimiter}`, start);
    if (next < 0) throw new Error("bootstrap: truncated body");
    parts.push(parsePart(text.slice(start, next)));
    position = next + 2;
  }
}

function parsePart(raw) {
  let head = "";
  let body = raw;
  if (raw.startsWith("\r\n")) {
    body = raw.slice(2);
  } else {
    const end = raw.indexOf("\r\n\r\n");
    if (end < 0) throw new Error("bootstrap: part without a header end");
    head = raw.slice(0, end);
    body = raw.slice(end + 4);
  }
  let contentType = "text/plain";
  for (const line of head.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === "content-type") {
      contentType = line.slice(colon + 1).trim();
    }
  }
  return { contentType, body };
}

function isJson(contentType) {
  return contentType.split(";")[0].trim().toLowerCase() === "application/json";
}

/** {snapshot, messages, nextOffset} from a bootstrap response. The snapshot
 *  is the parsed JSON of the first part (null when there is none); messages
 *  are the parsed update parts. A part that is not JSON fails the whole read:
 *  a session stream is JSON-mode. */
export async function readBootstrap(response) {
  const boundary = boundaryOf(response.headers.get("content-type"));
  if (boundary === null) throw new Error("bootstrap: not a multipart response");
  const parts = parseMultipart(await response.text(), boundary);
  if (parts.length === 0) throw new Error("bootstrap: no snapshot part");
  const [first, ...updates] = parts;
  const hasSnapshot = response.headers.get("stream-snapshot-offset") !== "-1";
  let snapshot = null;
  if (hasSnapshot && isJson(first.contentType) && first.body !== "") {
    snapshot = JSON.parse(first.body);
  }
  const messages = updates.map((part) => {
    if (!isJson(part.contentType)) throw new Error(`bootstrap: a ${part.contentType} part`);
    return JSON.parse(part.body);
  });
  return { snapshot, messages, nextOffset: response.headers.get("stream-next-offset") };
}
