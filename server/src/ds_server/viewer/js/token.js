// The user's token: kept per tab, its claims read for display only (the
// gateway verifies it; the page never trusts what it decodes here).

const TOKEN_KEY = "ds-viewer:token";
export const DEV_TOKEN_PATH = "/ui/dev-token.json";

/** {sub, exp, ...} of a JWT, or null when it is not one. */
export function claimsOf(token) {
  const payload = token.split(".")[1];
  if (payload === undefined) return null;
  try {
    const base64 = payload.replace(/-/g, "+").replace(/_/g, "/");
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    const claims = JSON.parse(new TextDecoder().decode(bytes));
    return typeof claims === "object" && claims !== null && !Array.isArray(claims) ? claims : null;
  } catch {
    return null;
  }
}

export function storedToken() {
  return sessionStorage.getItem(TOKEN_KEY) ?? "";
}

export function storeToken(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

/** The dev stack's token ({token, sub, expires_at}), or null where there is none.
 *  Only `make dev`'s gateway answers this path; elsewhere it is a 404. */
export async function fetchDevToken() {
  try {
    const response = await fetch(DEV_TOKEN_PATH, { cache: "no-store" });
    if (!response.ok) return null;
    const offered = await response.json();
    return typeof offered?.token === "string" ? offered : null;
  } catch {
    return null;
  }
}
