// Message throughput with the official TypeScript client and its default
// batching, the method of the official benchmark (durable-streams
// packages/benchmarks, "small messages" / "large messages"): a fresh stream,
// then rounds of `concurrency` concurrent stream.append() calls until
// `messages` is reached. The official loop runs ceil(messages / concurrency)
// full rounds (1000 / 75 → 14 rounds, 1050 appends) but divides by `messages`;
// here the appends actually made are counted.
//
//   node client-appends.mjs --url http://127.0.0.1:4437 --messages 1000 --concurrency 75 --size 100
import { parseArgs } from "node:util"
import { DurableStream } from "@durable-streams/client"

const { values } = parseArgs({
  options: {
    url: { type: "string" },
    messages: { type: "string", default: "1000" },
    concurrency: { type: "string", default: "75" },
    size: { type: "string", default: "100" },
    iterations: { type: "string", default: "3" },
  },
})
const messageCount = Number(values.messages)
const concurrency = Number(values.concurrency)
const message = new Uint8Array(Number(values.size)).fill(42)

const t0 = performance.now()
const c0 = process.cpuUsage()
const runs = []
for (let i = 0; i < Number(values.iterations); i++) {
  const stream = await DurableStream.create({
    url: `${values.url}/v1/stream/msg-${process.pid}-${i}-${Math.random()}`,
    contentType: "application/octet-stream",
  })
  let appends = 0
  const started = performance.now()
  for (let batch = 0; batch < messageCount / concurrency; batch++) {
    await Promise.all(Array.from({ length: concurrency }, () => stream.append(message)))
    appends += concurrency
  }
  const seconds = (performance.now() - started) / 1000
  await stream.delete()
  runs.push({ appends, seconds })
}
const cpu = process.cpuUsage(c0)
const usage = { cpu_s: (cpu.user + cpu.system) / 1e6, wall_s: (performance.now() - t0) / 1000 }
console.log(JSON.stringify({ runs, usage }))
