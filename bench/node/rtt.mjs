// Append→read round trip, the method of the official benchmark
// (durable-streams packages/benchmarks, "append and receive via long-poll"):
// per iteration a fresh stream, a warm-up append/receive, then the timed one —
// a long-poll reader started with the official client, an append, the time
// until the reader has the bytes. Only the total RTT is reported (the official
// run's ping baseline is left out: the reference serves no health route).
//
//   node rtt.mjs --url http://127.0.0.1:4437 --iterations 200
import { parseArgs } from "node:util"
import { DurableStream } from "@durable-streams/client"

const { values } = parseArgs({
  options: {
    url: { type: "string" },
    iterations: { type: "string", default: "200" },
    size: { type: "string", default: "100" },
  },
})
const baseUrl = values.url
const message = new Uint8Array(Number(values.size)).fill(42)

function receiveOnce(stream, offset) {
  return (async () => {
    const res = await stream.stream({ offset, live: "long-poll" })
    return await new Promise((resolve) => {
      const unsubscribe = res.subscribeBytes((chunk) => {
        if (chunk.data.length > 0) {
          unsubscribe()
          res.cancel()
          resolve(chunk.offset)
        }
      })
    })
  })()
}

const t0 = performance.now()
const c0 = process.cpuUsage()
const rtt = []
for (let i = 0; i < Number(values.iterations); i++) {
  const stream = await DurableStream.create({
    url: `${baseUrl}/v1/stream/rtt-${process.pid}-${i}-${Math.random()}`,
    contentType: "application/octet-stream",
  })
  let offset = (await stream.head()).offset

  const warmup = receiveOnce(stream, offset)
  await stream.append(message)
  offset = await warmup

  const read = receiveOnce(stream, offset)
  const started = performance.now()
  await stream.append(message)
  await read
  rtt.push(performance.now() - started)

  await stream.delete()
}
console.log(JSON.stringify({ rtt_ms: rtt, usage: usageSince(t0, c0) }))

function usageSince(t0, c0) {
  const cpu = process.cpuUsage(c0)
  return { cpu_s: (cpu.user + cpu.system) / 1e6, wall_s: (performance.now() - t0) / 1000 }
}
