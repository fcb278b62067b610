// The official Node reference server (@durable-streams/server), for the benchmark.
//
//   node server.mjs --port 4437 [--host 127.0.0.1] [--data-dir DIR]
//
// Without --data-dir it runs in memory mode; with it, in file mode (log files
// plus LMDB, fsync on every append). Everything else is the package default:
// 30 s long-poll timeout, compression on (the benchmark's clients ask for
// identity encoding, so no response is compressed).
import { parseArgs } from "node:util"
import { DurableStreamTestServer } from "@durable-streams/server"

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "4437" },
    host: { type: "string", default: "127.0.0.1" },
    "data-dir": { type: "string" },
  },
})

const server = new DurableStreamTestServer({
  port: Number(values.port),
  host: values.host,
  dataDir: values["data-dir"],
})

const url = await server.start()
console.log(JSON.stringify({ url, mode: values["data-dir"] ? "file" : "memory" }))

let stopping = false
async function stop() {
  if (stopping) return
  stopping = true
  await server.stop()
  process.exit(0)
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
