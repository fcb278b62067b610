// Requests to the gateway with the user's token, and what a failure means.
//
// Plain fetch and EventSource, not the official @durable-streams/client: its
// published build imports the bare module "fastq", a CommonJS package, which
// a browser can only load through a bundler, and this page has no build step.

export class ApiError extends Error {
  constructor(status, reason) {
    super(reason);
    this.status = status;
    this.reason = reason;
  }
}

/** A same-origin path below /ds/ for a bucket, and optionally a stream in it. */
export function dsPath(bucket, stream, suffix = "") {
  const base = `/ds/${encodeURIComponent(bucket)}`;
  return stream === undefined ? base + suffix : `${base}/${encodeURIComponent(stream)}${suffix}`;
}

/** fetch with the token as a Bearer header; only a network failure throws (ApiError 0). */
export async function send(method, path, token, { headers = {}, body, keepalive = false } = {}) {
  try {
    return await fetch(path, {
      method,
      body,
      keepalive,
      cache: "no-store",
      headers: { ...headers, Authorization: `Bearer ${token}` },
    });
  } catch (error) {
    throw new ApiError(0, `cannot reach the gateway (${error.message})`);
  }
}

/** As send, and a non-2xx answer throws ApiError too. */
export async function call(method, path, token, options = {}) {
  const response = await send(method, path, token, options);
  if (!response.ok) throw new ApiError(response.status, await reasonOf(response));
  return response;
}

/** The short reason a failed response gives (its body's first line). */
export async function reasonOf(response) {
  let text = "";
  try {
    text = await response.text();
  } catch {
    // the body is gone with the connection; the status says enough
  }
  const line = text.trim().split("\n")[0].slice(0, 300);
  return line || response.statusText || `HTTP ${response.status}`;
}

/** A sentence for the user about a failed request. */
export function describe(error, claims) {
  if (!(error instanceof ApiError)) return `Something went wrong: ${error.message}`;
  const { status, reason } = error;
  if (status === 401) {
    const now = Date.now() / 1000;
    const expired = claims !== null && typeof claims.exp === "number" && claims.exp < now;
    const when = expired ? ` It expired at ${new Date(claims.exp * 1000).toLocaleString()}.` : "";
    return (
      `The gateway rejected the token (${reason}).${when} ` +
      "Paste a new token (ds-token prints one) or use the dev token."
    );
  }
  if (status === 403) return `The token does not allow this: ${reason}`;
  if (status === 404) return `Not found: ${reason}`;
  if (status === 0) return `Connection failed: ${reason}`;
  return `The server answered ${status}: ${reason}`;
}
