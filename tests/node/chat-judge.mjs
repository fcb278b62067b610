// The official AI SDK transport driving the example chat backend, as a browser's
// useChat would: createDurableChatTransport from @durable-streams/aisdk-transport,
// unchanged. Prints one JSON line per step for the Python test to check.
//
//   node judge.mjs --api http://127.0.0.1:3000/api/chat --chat c1 --text hi --mode whole
//     {"chunks": [...], "text": "..."}             every chunk of one generation
//   node judge.mjs ... --mode reconnect --before 3
//     {"event": "partial", "chunks": [...]}       the first 3 chunks, then the "page reloads"
//     {"event": "reconnected"}                    reconnectToStream found the generation
//     {"event": "done", "chunks": [...], "text"}  what the reconnected stream delivered
//     {"event": "after", "inFlight": false}       reconnectToStream once it has finished
import { parseArgs } from "node:util"
import { setTimeout as sleep } from "node:timers/promises"
import { createDurableChatTransport } from "@durable-streams/aisdk-transport"
import { readUIMessageStream } from "ai"

const { values } = parseArgs({
  options: {
    api: { type: "string" },
    chat: { type: "string" },
    text: { type: "string" },
    mode: { type: "string", default: "whole" },
    before: { type: "string", default: "3" },
  },
})

const say = (value) => process.stdout.write(JSON.stringify(value) + "\n")

async function readAll(stream) {
  const chunks = []
  const reader = stream.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return chunks
    chunks.push(value)
  }
}

// The AI SDK's own reading of the chunks: the assistant message they make up.
async function messageText(chunks) {
  const stream = new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk)
      controller.close()
    },
  })
  let message = null
  for await (const update of readUIMessageStream({ stream, terminateOnError: true })) {
    message = update
  }
  return message.parts.filter((part) => part.type === "text").map((part) => part.text).join("")
}

const transport = createDurableChatTransport({ api: values.api })
const request = {
  trigger: "submit-message",
  chatId: values.chat,
  messageId: undefined,
  messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: values.text }] }],
  abortSignal: undefined,
}

if (values.mode === "whole") {
  const chunks = await readAll(await transport.sendMessages(request))
  say({ chunks, text: await messageText(chunks) })
} else {
  const first = (await transport.sendMessages(request)).getReader()
  const partial = []
  while (partial.length < Number(values.before)) {
    const { done, value } = await first.read()
    if (done) break
    partial.push(value)
  }
  say({ event: "partial", chunks: partial })
  await first.cancel() // the page goes away mid-generation
  const resumed = await transport.reconnectToStream({ chatId: values.chat })
  if (resumed === null) {
    say({ event: "error", reason: "reconnectToStream found nothing in flight" })
    process.exit(1)
  }
  say({ event: "reconnected" })
  const chunks = await readAll(resumed)
  say({ event: "done", chunks, text: await messageText(chunks) })
  // The server forgets the generation once it is written: then there is nothing to resume.
  let inFlight = true
  for (let attempt = 0; attempt < 300 && inFlight; attempt += 1) {
    const again = await transport.reconnectToStream({ chatId: values.chat })
    inFlight = again !== null
    if (inFlight) {
      await again.cancel()
      await sleep(100)
    }
  }
  say({ event: "after", inFlight })
}
process.exit(0)
