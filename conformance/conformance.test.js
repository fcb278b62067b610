// The official Durable Streams conformance suite, run through its programmatic
// entry point so the subscription tests (subscriptions: true) run too.
import { runConformanceTests } from "@durable-streams/server-conformance-tests"

const baseUrl = process.env.CONFORMANCE_TEST_URL
if (!baseUrl) {
  throw new Error("CONFORMANCE_TEST_URL is not set; run `make conformance`")
}

runConformanceTests({
  baseUrl,
  longPollTimeoutMs: Number(process.env.CONFORMANCE_LONG_POLL_MS ?? "1000"),
  subscriptions: true,
})
