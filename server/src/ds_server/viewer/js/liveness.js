// Presence and typing that expire when their writer goes away: the rule of
// durable_sessions.sessions.liveness (docs/sessions.md), with the same numbers.
//
// Writers put `expires_at` (an RFC 3339 time) in every presence and typing
// upsert: now + 60 s for presence, now + 10 s for typing, and write again
// while present (every 20 s) or typing (at most every 3 s). Readers treat an
// entry whose `expires_at` is at or before their clock's now as gone (offline,
// not typing); an entry without one, or with one that does not parse, never
// expires. Pure: no DOM, no I/O.

export const EXPIRES_AT = "expires_at";
export const PRESENCE_TTL_MS = 60_000;
export const PRESENCE_REFRESH_MS = 20_000;
export const TYPING_TTL_MS = 10_000;
export const TYPING_REFRESH_MS = 3_000;

// The sessions contract's §2 grammar for times (as ds-sync and the SDK read them).
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))?$/;
const MAX_OFFSET_MINUTES = 18 * 60;
const YEAR_1 = (() => {
  const date = new Date(0);
  date.setUTCFullYear(1, 0, 1);
  return date.getTime();
})();
const YEAR_10000 = (() => {
  const date = new Date(0);
  date.setUTCFullYear(10000, 0, 1);
  return date.getTime();
})();

/** Milliseconds since the epoch of an RFC 3339 date-time (with the microseconds as a
 *  fraction), or null when `text` is not one (digits past microseconds are dropped; no
 *  zone means UTC). */
export function parseTime(text) {
  if (typeof text !== "string") return null;
  const match = DATE_TIME.exec(text);
  if (match === null) return null;
  const [, year, month, day, hour, minute, second, fraction, sign, offH, offM] = match;
  const numbers = [year, month, day, hour, minute, second].map(Number);
  const [y, mo, d, h, mi, s] = numbers;
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return null;
  let offset = 0;
  if (sign !== undefined) {
    if (Number(offM) > 59) return null;
    offset = Number(offH) * 60 + Number(offM);
    if (offset > MAX_OFFSET_MINUTES) return null;
    if (sign === "-") offset = -offset;
  }
  // Date.UTC reads years 0-99 as 1900-1999: set the year on its own.
  const date = new Date(Date.UTC(2000, 0, 1, h, mi, s));
  date.setUTCFullYear(y, mo - 1, d);
  if (date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return null; // February 30
  const instant = date.getTime() - offset * 60_000;
  if (instant < YEAR_1 || instant >= YEAR_10000) return null;
  // Added last: near year 9999 a fraction of a millisecond rounds the sum up.
  return instant + Number((fraction ?? "").slice(0, 6).padEnd(6, "0")) / 1000;
}

function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** When a presence or typing entry expires (ms since the epoch), null when never. */
export function expiresAt(value) {
  return isObject(value) ? parseTime(value[EXPIRES_AT]) : null;
}

/** Whether a presence or typing entry has expired at `now` (ms since the epoch). */
export function isExpired(value, now) {
  const deadline = expiresAt(value);
  return deadline !== null && deadline <= now;
}

/** The `expires_at` of an entry written at `now` that lives `ttlMs`. */
export function deadline(now, ttlMs) {
  return new Date(now + ttlMs).toISOString();
}
