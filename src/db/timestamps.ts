import pg from "pg";

/** pg's own parser for `timestamptz` text (postgres-date): the fallback for unusual forms. */
const general = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, "text") as (
  text: string,
) => Date | number | null;

const ZERO = 48;

/** The value of the two decimal digits at `at`, or NaN when either is not a digit. */
function twoDigits(text: string, at: number): number {
  const tens = text.charCodeAt(at) - ZERO;
  const ones = text.charCodeAt(at + 1) - ZERO;
  return tens >= 0 && tens <= 9 && ones >= 0 && ones <= 9 ? tens * 10 + ones : Number.NaN;
}

/**
 * A `timestamptz` as PostgreSQL writes it with `DateStyle = ISO` (its default, and what pg
 * expects): `2026-11-25 09:03:13.123456+00`, the zone's offset in hours, with minutes and
 * seconds when it has them (`+05:30`, `+00:19:32`). Read field by field with `Date.UTC`
 * rather than by pg's regular expressions: every event read carries two of them, and the
 * regular expressions were a fifth of the CPU of reading the log.
 *
 * Anything else (years before 1000 or after 9999, BC, `infinity`) goes to pg's parser. A
 * fraction keeps its milliseconds and drops the rest, as a `Date` must.
 */
export function parseTimestamptz(text: string): Date | number | null {
  const n = text.length;
  // The shortest: "YYYY-MM-DD HH:MM:SS+HH" (22 characters).
  if (n < 22 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return general(text);
  if (text.charCodeAt(10) !== 32 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) {
    return general(text);
  }
  const year = twoDigits(text, 0) * 100 + twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  const second = twoDigits(text, 17);
  let at = 19;
  let millis = 0;
  if (text.charCodeAt(at) === 46) {
    // Up to six digits of fraction; the first three are the milliseconds.
    at++;
    let digits = 0;
    for (; at < n; at++, digits++) {
      const digit = text.charCodeAt(at) - ZERO;
      if (digit < 0 || digit > 9) break;
      if (digits < 3) millis = millis * 10 + digit;
    }
    if (digits === 0 || digits > 6) return general(text);
    for (; digits < 3; digits++) millis *= 10;
  }
  const sign = text.charCodeAt(at);
  if ((sign !== 43 && sign !== 45) || year < 1000) return general(text);
  let offset = twoDigits(text, at + 1) * 3600;
  at += 3;
  for (let unit = 60; at < n && unit >= 1; unit /= 60) {
    if (text.charCodeAt(at) !== 58) return general(text);
    offset += twoDigits(text, at + 1) * unit;
    at += 3;
  }
  if (at !== n) return general(text);
  const local = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  // NaN when a field was not two digits; a month or day out of range is not PostgreSQL's.
  if (Number.isNaN(local + offset) || month < 1 || month > 12 || day < 1 || day > 31) {
    return general(text);
  }
  return new Date(local - (sign === 45 ? -offset : offset) * 1000);
}
