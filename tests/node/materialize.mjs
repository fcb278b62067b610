// A reader of a pg-{table} stream built on the official packages, as docs/sync.md
// tells readers to: the stream's /bootstrap (its snapshot, a JSON array of State
// Protocol messages, then one message per part), applied to @durable-streams/state's
// MaterializedState, then @durable-streams/client following the stream from the
// bootstrap's Stream-Next-Offset. A `reset` control clears the state (the State
// Protocol leaves controls to the application); a 410 while following means
// retention moved past the reader: it bootstraps again.
//
//   node materialize.mjs STREAM_URL TYPE UNTIL [AUTHORIZATION]
//
// Prints {"rows": {key: value}, "bootstraps": n, "bootstrap_bytes": n, "applied": n}
// (messages applied) once it has read UNTIL: up to that offset (20 digits), "-" until
// up to date, or "title=T" until a row with that title is in the state (a follower
// stopped by a marker row).
import { MaterializedState } from "@durable-streams/state"
import { stream } from "@durable-streams/client"

const [url, type, until, authorization] = process.argv.slice(2)
const headers = authorization ? { Authorization: authorization } : {}
const marker = until.startsWith("title=") ? until.slice("title=".length) : null

function done(state, offset) {
  if (marker !== null) {
    return [...state.getType(type).values()].some((row) => row?.title === marker)
  }
  return until !== "-" && offset >= until
}

let applied = 0

function apply(state, message) {
  applied += 1
  const control = message?.headers?.control
  if (control === "reset") state.clear()
  else if (control === undefined) state.apply(message)
}

function parts(body, boundary) {
  // RFC 2046: each part is "--boundary CRLF headers CRLF CRLF content", and the CRLF
  // before the next delimiter belongs to that delimiter.
  const found = []
  for (const chunk of body.split(`\r\n--${boundary}`)) {
    const start = chunk.indexOf("\r\n\r\n")
    if (start >= 0) found.push(chunk.slice(start + 4))
  }
  return found
}

async function bootstrap(state) {
  const response = await fetch(`${url}/bootstrap`, { headers })
  if (response.status !== 200) throw new Error(`bootstrap: HTTP ${response.status}`)
  const boundary = /boundary=([^;]+)/.exec(response.headers.get("content-type"))[1]
  // Prepend a CRLF so the first delimiter splits like the others.
  const body = "\r\n" + (await response.text())
  const [snapshot, ...messages] = parts(body, boundary)
  state.clear()
  if (response.headers.get("stream-snapshot-offset") !== "-1") {
    for (const message of JSON.parse(snapshot)) apply(state, message)
  }
  for (const message of messages) apply(state, JSON.parse(message))
  return { offset: response.headers.get("stream-next-offset"), size: body.length }
}

const state = new MaterializedState()
let bootstraps = 0
let bootstrapBytes = 0
let offset = null
for (;;) {
  if (offset === null) {
    const begun = await bootstrap(state)
    // Tells a test that the reader is following now (stdout carries only the result).
    if (bootstraps === 0) process.stderr.write("bootstrapped\n")
    bootstraps += 1
    bootstrapBytes = begun.size
    offset = begun.offset
  }
  if (done(state, offset)) break
  const controller = new AbortController()
  try {
    const response = await stream({
      url,
      offset,
      live: until === "-" ? false : "long-poll",
      json: true,
      headers,
      signal: controller.signal,
    })
    await new Promise((resolve, reject) => {
      response.subscribeJson((batch) => {
        for (const message of batch.items) apply(state, message)
        offset = batch.offset
        if (until === "-" ? batch.upToDate : done(state, offset)) {
          controller.abort()
          resolve()
        }
      })
      response.closed.then(resolve, reject)
    })
  } catch (error) {
    if (error?.status === 410) {
      offset = null // retention moved past us: start again from the bootstrap
      continue
    }
    if (!controller.signal.aborted) throw error
  }
  if (until === "-" || done(state, offset)) break
}
const rows = Object.fromEntries(state.getType(type))
process.stdout.write(JSON.stringify({ rows, bootstraps, bootstrap_bytes: bootstrapBytes, applied }) + "\n")
