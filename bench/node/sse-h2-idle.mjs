// Idle SSE streams over HTTP/2 (h2c), held until stdin closes:
//
//   node sse-h2-idle.mjs --url URL --streams 10000 --per-connection 100 [--token T]
//
// Browsers reach a gateway over HTTP/2 and multiplex their SSE streams on
// a few connections, so this is how idle readers arrive at Envoy. (Over
// HTTP/1.1 each stream is a connection of its own, on both sides of the
// gateway.) Prints {"ready": n} once every stream has its 200 headers and
// its first event, then {"streams": n, "closed": m, "usage": …} at the end.
import http2 from "node:http2"
import { parseArgs } from "node:util"

const { values } = parseArgs({
  options: {
    url: { type: "string" },
    streams: { type: "string", default: "1000" },
    "per-connection": { type: "string", default: "100" },
    token: { type: "string", default: "" },
  },
})
const target = new URL(values.url)
const total = Number(values.streams)
const perConnection = Number(values["per-connection"])
const t0 = performance.now()
const c0 = process.cpuUsage()
let closed = 0

function open(session) {
  return new Promise((resolve, reject) => {
    const headers = {
      ":method": "GET",
      ":path": `${target.pathname}?offset=-1&live=sse`,
      accept: "text/event-stream",
      "accept-encoding": "identity",
    }
    if (values.token) headers.authorization = `Bearer ${values.token}`
    const stream = session.request(headers)
    stream.on("response", (head) => {
      if (head[":status"] !== 200) reject(new Error(`SSE answered ${head[":status"]}`))
    })
    // The first event (the control event at the tail) says the read is live.
    stream.once("data", () => resolve(stream))
    stream.on("error", reject)
    stream.on("close", () => closed++)
  })
}

const sessions = []
const streams = []
for (let opened = 0; opened < total; opened += perConnection) {
  const session = http2.connect(target.origin)
  session.on("error", (err) => {
    console.error(err)
    process.exit(1)
  })
  sessions.push(session)
  const wave = []
  for (let i = opened; i < Math.min(total, opened + perConnection); i++) wave.push(open(session))
  streams.push(...(await Promise.all(wave)))
}
console.log(JSON.stringify({ ready: streams.length, connections: sessions.length }))

process.stdin.resume()
await new Promise((resolve) => process.stdin.on("end", resolve))
const stillOpen = streams.length - closed
for (const session of sessions) session.destroy()
const cpu = process.cpuUsage(c0)
process.stdout.write(
  JSON.stringify({
    streams: streams.length,
    closed: streams.length - stillOpen,
    usage: { cpu_s: (cpu.user + cpu.system) / 1e6, wall_s: (performance.now() - t0) / 1000 },
  }) + "\n",
  () => process.exit(0),
)
