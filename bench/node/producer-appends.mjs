// Messages/s through the official TypeScript IdempotentProducer: `producers`
// producers in this one process, each on a stream of its own, each appending
// `messages` JSON messages of `size` bytes in bursts of `burst` (yielding to
// the event loop between bursts, so batches go out while appends go on),
// then flush(). The same shape as ds_bench.producer_load on the Python side.
//
//   node producer-appends.mjs --url http://127.0.0.1:4437 --producers 16 --messages 20000 --size 100
import { parseArgs } from "node:util"
import { DurableStream, IdempotentProducer } from "@durable-streams/client"

const { values } = parseArgs({
  options: {
    url: { type: "string" },
    producers: { type: "string", default: "1" },
    messages: { type: "string", default: "100000" },
    size: { type: "string", default: "100" },
    burst: { type: "string", default: "1000" },
  },
})
const producerCount = Number(values.producers)
const messageCount = Number(values.messages)
const burst = Number(values.burst)
// {"n":123456,"pad":"xxx…"} padded to `size` bytes, as a string (pre-serialised JSON).
const message = (n) => {
  const head = `{"n":${n},"pad":"`
  return head + "x".repeat(Math.max(0, Number(values.size) - head.length - 2)) + `"}`
}
const yieldToLoop = () => new Promise((resolve) => setImmediate(resolve))

const streams = await Promise.all(
  Array.from({ length: producerCount }, (_, i) =>
    DurableStream.create({
      url: `${values.url}/v1/stream/producers-ts-${process.pid}-${i}-${Math.random()}`,
      contentType: "application/json",
    })
  )
)
const errors = []
const c0 = process.cpuUsage()
const started = performance.now()
await Promise.all(
  streams.map(async (stream, i) => {
    const producer = new IdempotentProducer(stream, `bench-${i}`, {
      onError: (error) => errors.push(String(error)),
    })
    for (let n = 0; n < messageCount; n++) {
      producer.append(message(n))
      if (n % burst === burst - 1) await yieldToLoop()
    }
    await producer.flush()
  })
)
const seconds = (performance.now() - started) / 1000
const cpu = process.cpuUsage(c0)
await Promise.all(streams.map((stream) => stream.delete()))
console.log(
  JSON.stringify({
    messages: producerCount * messageCount,
    seconds,
    cpu_s: (cpu.user + cpu.system) / 1e6,
    errors: errors.length,
  })
)
