// Runs before the suite is imported. With CONFORMANCE_TOKEN set (the run
// through the Envoy gateway, which requires a JWT on every request), every
// request the suite makes carries it as a bearer token.
const token = process.env.CONFORMANCE_TOKEN
if (token) {
  const plainFetch = globalThis.fetch
  globalThis.fetch = (input, init = {}) => {
    const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined))
    if (!headers.has("authorization")) {
      headers.set("authorization", `Bearer ${token}`)
    }
    return plainFetch(input, { ...init, headers })
  }
}
