/**
 * Durations, one grammar for every channel, the configuration, hooks, workflows and the test
 * driver:
 * - compact: a whole number with a unit, `ms`, `s`, `m`, `h`, `d`, `w`, parts combined
 *   largest first: `500ms`, `30s`, `5m`, `2h`, `3d`, `1w`, `1h30m`, `1d12h`; and years, `y`,
 *   a calendar part (`7y`, `1y6w`), only where a calendar reads them (retention);
 * - ISO 8601: `PT5M`, `PT1.5S`, `P3D`, `P1W`, `P1DT12H`, and with a calendar part `P1M`,
 *   `P1Y2M` (months and years, only where a calendar reads them: moments, REST's `range`).
 *
 * Days and weeks are 24 and 168 hours. Letter case does not matter in ISO forms.
 */

/** A length of time: an exact part in milliseconds and a calendar part in months. */
export interface Span {
  readonly ms: number;
  readonly months: number;
}

/** What a duration may be written as, for messages and hints. */
export const DURATION_FORMS =
  "a duration such as 90s, 15m, 24h, 7d, 2w, 1h30m, PT15M, P1D, P1W or P1M";

/** The same, for exact durations (no months or years); `"0"` where it means none. */
export const EXACT_DURATION_FORMS =
  "a duration such as 500ms, 30s, 5m, 2h, 3d, 1w, 1h30m, PT5M or P3D";

const COMPACT_UNITS: Readonly<Record<string, number>> = {
  w: 604_800_000,
  d: 86_400_000,
  h: 3_600_000,
  m: 60_000,
  s: 1_000,
  ms: 1,
};
// `ms` before `m` and `s`, so "5ms" reads as milliseconds, not as minutes followed by junk.
const COMPACT = /^(?:\d{1,9}(?:ms|y|w|d|h|m|s))+$/;
const COMPACT_PART = /(\d{1,9})(ms|y|w|d|h|m|s)/g;
/** A year, compared with the exact units only to keep parts largest first. */
const YEAR_SIZE = 366 * 86_400_000;
const ISO_DURATION =
  /^P(?:(\d{1,9})Y)?(?:(\d{1,9})M)?(?:(\d{1,9})W)?(?:(\d{1,9})D)?(?:T(?:(\d{1,9})H)?(?:(\d{1,9})M)?(?:(\d{1,9})(?:[.,](\d{1,3}))?S)?)?$/;

/**
 * Reads a duration, or undefined when `text` is not one.
 *
 * @example
 * readSpan("1h30m"); // { ms: 5_400_000, months: 0 }
 * readSpan("P1M"); // { ms: 0, months: 1 }
 */
export function readSpan(text: string): Span | undefined {
  if (COMPACT.test(text)) {
    let ms = 0;
    let months = 0;
    let previous = Infinity;
    for (const [, amount, unit] of text.matchAll(COMPACT_PART)) {
      const size = unit === "y" ? YEAR_SIZE : COMPACT_UNITS[unit!]!;
      if (size >= previous) return undefined; // "30m1h" or "1s1s" is a slip, not a sum
      previous = size;
      if (unit === "y") months += Number(amount) * 12;
      else ms += Number(amount) * size;
    }
    return { ms, months };
  }
  const iso = ISO_DURATION.exec(text.toUpperCase());
  if (!iso || text.length < 3 || /T$/i.test(text)) return undefined;
  const [, y, mo, w, d, h, mi, s] = iso.map((part) => Number(part ?? 0));
  const ms =
    w! * 604_800_000 +
    d! * 86_400_000 +
    h! * 3_600_000 +
    mi! * 60_000 +
    s! * 1_000 +
    Math.round(Number(`0.${iso[8] ?? "0"}`) * 1_000);
  return { ms, months: y! * 12 + mo! };
}

/**
 * Reads an exact duration in milliseconds: any form of `readSpan` without months or years,
 * or `"0"`; undefined otherwise (and for a length past what a millisecond count can hold).
 *
 * @example
 * durationMs("1w"); // 604_800_000
 * durationMs("PT5M"); // 300_000
 * durationMs("P1M"); // undefined: a month is no fixed length
 */
export function durationMs(text: string): number | undefined {
  if (text === "0") return 0;
  const span = readSpan(text);
  if (span === undefined || span.months !== 0 || !Number.isSafeInteger(span.ms)) return undefined;
  return span.ms;
}
