// SSE fan-out load: subscribers on raw sockets, and a steady writer.
//
//   node sse-fanout.mjs subscribe --url URL --count 500 --expect 150 [--timeout 120]
//   node sse-fanout.mjs write --url URL --rate 10 --count 150 [--size 100]
//
// Each message is `#<seq:8>:<send time:19>;` padded to --size bytes, the send
// time being CLOCK_MONOTONIC in ns (process.hrtime), which every process on the
// machine shares; delivery latency = receive time − send time. Subscribers
// speak HTTP/1.1 on plain sockets and scan the bytes for records instead of
// running a full HTTP + SSE parser per connection: at 1,000 connections the
// generator must stay cheap. Both servers write each record in one piece, so
// chunked framing never splits one; TCP segmentation might, hence the carry.
//
// A subscriber process prints {"ready": n} once every connection has its 200
// headers, then {"delivered": …, "latencies_ms": […]} when every subscriber has
// seen --expect records, when --timeout passes, or (with --expect 0, idle
// connections) when its stdin closes.
import http from "node:http"
import net from "node:net"
import { parseArgs } from "node:util"

const role = process.argv[2]
const { values } = parseArgs({
  args: process.argv.slice(3),
  options: {
    url: { type: "string" },
    count: { type: "string", default: "1" },
    expect: { type: "string", default: "0" },
    timeout: { type: "string", default: "120" },
    rate: { type: "string", default: "10" },
    size: { type: "string", default: "100" },
    wave: { type: "string", default: "100" },
  },
})
const target = new URL(values.url)
const t0 = performance.now()
const c0 = process.cpuUsage()
function usage() {
  const cpu = process.cpuUsage(c0)
  return { cpu_s: (cpu.user + cpu.system) / 1e6, wall_s: (performance.now() - t0) / 1000 }
}
const RECORD = /#(\d{8}):(\d{19});/g
const CARRY = 29 // one record header minus a byte

function connect(path, onRecord) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: target.hostname, port: Number(target.port) })
    sock.setNoDelay(true)
    const state = { sock, last: -1, closed: false }
    let headers = true
    let carry = ""
    sock.on("connect", () => {
      sock.write(
        `GET ${path} HTTP/1.1\r\nHost: ${target.host}\r\n` +
          `Accept: text/event-stream\r\nAccept-Encoding: identity\r\n\r\n`,
      )
    })
    sock.on("data", (buf) => {
      const now = process.hrtime.bigint()
      let text = carry + buf.toString("latin1")
      if (headers) {
        const end = text.indexOf("\r\n\r\n")
        if (end < 0) {
          carry = text
          return
        }
        if (!text.startsWith("HTTP/1.1 200")) {
          reject(new Error(`subscribe: ${text.slice(0, text.indexOf("\r\n"))}`))
          sock.destroy()
          return
        }
        headers = false
        resolve(state)
        text = text.slice(end + 4)
      }
      RECORD.lastIndex = 0
      for (let m = RECORD.exec(text); m !== null; m = RECORD.exec(text)) {
        const seq = Number(m[1])
        if (seq > state.last) {
          state.last = seq
          onRecord(state, seq, now, BigInt(m[2]))
        }
      }
      carry = text.slice(-CARRY)
    })
    sock.on("error", (err) => reject(err))
    sock.on("close", () => {
      state.closed = true
      if (headers) reject(new Error("subscribe: connection closed before headers"))
    })
  })
}

async function subscribe() {
  const count = Number(values.count)
  const expect = Number(values.expect)
  const path = `${target.pathname}?offset=-1&live=sse`
  const latencies = []
  let delivered = 0
  let complete = 0
  let firstNs = 0n
  let lastNs = 0n
  let finish = () => {}
  const finished = new Promise((resolve) => (finish = resolve))
  const onRecord = (state, seq, now, sent) => {
    latencies.push(Number(now - sent) / 1e6)
    delivered++
    if (firstNs === 0n) firstNs = now
    lastNs = now
    if (seq === expect - 1) {
      complete++
      if (complete === count) finish()
    }
  }
  const subs = []
  for (let i = 0; i < count; i += Number(values.wave)) {
    const wave = []
    for (let j = i; j < Math.min(count, i + Number(values.wave)); j++) {
      wave.push(connect(path, onRecord))
    }
    subs.push(...(await Promise.all(wave)))
  }
  console.log(JSON.stringify({ ready: subs.length }))

  process.stdin.on("end", finish)
  process.stdin.resume()
  const timer = setTimeout(finish, Number(values.timeout) * 1000)
  await finished
  clearTimeout(timer)
  const dropped = subs.filter((s) => s.closed).length
  for (const s of subs) s.sock.destroy()
  process.stdout.write(
    JSON.stringify({
      subscribers: count,
      delivered,
      complete,
      dropped,
      first_ns: firstNs.toString(),
      last_ns: lastNs.toString(),
      latencies_ms: latencies.map((v) => Math.round(v * 1000) / 1000),
      usage: usage(),
    }) + "\n",
    () => process.exit(0),
  )
}

async function write() {
  const rate = Number(values.rate)
  const count = Number(values.count)
  const size = Number(values.size)
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const post = (body) =>
    new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: target.hostname,
          port: Number(target.port),
          path: target.pathname,
          method: "POST",
          agent,
          headers: { "content-type": "text/plain", "content-length": body.length },
        },
        (res) => {
          res.resume()
          res.on("end", () => (res.statusCode < 300 ? resolve() : reject(new Error(`append: ${res.statusCode}`))))
        },
      )
      req.on("error", reject)
      req.end(body)
    })
  const pad = "x".repeat(size)
  const startNs = process.hrtime.bigint()
  const postMs = []
  for (let seq = 0; seq < count; seq++) {
    const due = startNs + BigInt(Math.round((seq * 1e9) / rate))
    const wait = Number(due - process.hrtime.bigint()) / 1e6
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
    const sent = process.hrtime.bigint()
    const head = `#${String(seq).padStart(8, "0")}:${sent.toString().padStart(19, "0")};`
    await post(Buffer.from(head + pad.slice(head.length), "latin1"))
    postMs.push(Number(process.hrtime.bigint() - sent) / 1e6)
  }
  agent.destroy()
  console.log(
    JSON.stringify({
      sent: count,
      start_ns: startNs.toString(),
      end_ns: process.hrtime.bigint().toString(),
      post_ms: postMs,
      usage: usage(),
    }),
  )
}

if (role === "subscribe") await subscribe()
else if (role === "write") await write()
else {
  console.error("usage: sse-fanout.mjs subscribe|write --url URL ...")
  process.exit(2)
}
