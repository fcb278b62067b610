// Materialise a State Protocol stream with the official @durable-streams/state
// MaterializedState, read with the official client; print the state as JSON.
// Control messages as the protocol says: `reset` clears, the others mark.
//
//   node materialize.mjs --url http://127.0.0.1:8080/v1/stream/pg-items --token TOKEN
import { parseArgs } from "node:util"
import { stream } from "@durable-streams/client"
import { MaterializedState, isControlEvent } from "@durable-streams/state"

const { values } = parseArgs({
  options: { url: { type: "string" }, token: { type: "string", default: "" } },
})
const headers = values.token ? { Authorization: `Bearer ${values.token}` } : {}
const response = await stream({ url: values.url, offset: "-1", live: false, headers })
const messages = await response.json()
const state = new MaterializedState()
for (const message of messages) {
  if (isControlEvent(message)) {
    if (message.headers.control === "reset") state.clear()
    continue
  }
  state.apply(message)
}
const out = {}
for (const type of state.types) out[type] = Object.fromEntries(state.getType(type))
process.stdout.write(JSON.stringify({ state: out, messages: messages.length }))
