import { shift, withinYears } from "./calendar.ts";
import { readSpan } from "./durations.ts";
import { readMoment, type Clock } from "./moments.ts";

/**
 * Intervals (ISO 8601 time intervals, `<start>/<end>`), for questions over a period: `during`
 * in the REST channel. Each side is a moment of the one grammar (`moments.ts`), so
 * `2026-03-01/2026-04-01`, `2026-07-01T00:00:00Z/2026-10-01T00:00:00Z` and `last month/today`
 * all read; one side may instead be a duration (`2026-03-01/P1M`, `P7D/now`), which runs from
 * the start or back from the end; `..` leaves a side open (ISO 8601-2): from the beginning of
 * the record, or with no end (still ongoing).
 *
 * An interval is half-open, `[start, end)`: `2026-03-01/2026-04-01` is March and nothing of
 * April 1. So its start must lie before its end.
 */
export interface Interval {
  /** Its first moment; undefined: open, from the beginning of the record. */
  readonly start: Date | undefined;
  /** The first moment after it; undefined: open, no end. */
  readonly end: Date | undefined;
}

/** What an interval may be written as, for messages and hints. */
export const INTERVAL_FORMS =
  "<start>/<end>, each a moment (2026-03-01/2026-04-01, 2026-07-01T00:00:00Z/now), or one side a duration (2026-03-01/P1M, P7D/now), or .. for an open side (2026-03-01/..)";

/** Why a text is no interval: it does not read (`syntax`), or its start is not before its end (`reversed`). */
export type IntervalProblem =
  | { readonly kind: "syntax"; readonly message: string }
  | {
      readonly kind: "reversed";
      readonly message: string;
      readonly start: Date;
      readonly end: Date;
    };

export type IntervalReading =
  | { readonly interval: Interval; readonly problem?: undefined }
  | { readonly interval?: undefined; readonly problem: IntervalProblem };

const OPEN = "..";

const syntax = (message: string): IntervalReading => ({ problem: { kind: "syntax", message } });

/**
 * Reads an interval on `clock`.
 *
 * @example
 * readInterval("2026-03-01/P1M", { now, timeZone: "UTC" });
 * // { interval: { start: 2026-03-01T00:00:00.000Z, end: 2026-04-01T00:00:00.000Z } }
 */
export function readInterval(text: string, clock: Clock): IntervalReading {
  const parts = text.split("/");
  if (parts.length !== 2) {
    return syntax(
      `${JSON.stringify(text)} is not an interval: it needs one / between start and end`,
    );
  }
  const [startText, endText] = parts.map((part) => part.trim()) as [string, string];
  if (startText === "" || endText === "") {
    return syntax(`${JSON.stringify(text)} is not an interval: write .. for an open side`);
  }
  const startSpan = startText === OPEN ? undefined : readSpan(startText);
  const endSpan = endText === OPEN ? undefined : readSpan(endText);
  if (startSpan && endSpan) {
    return syntax(`${JSON.stringify(text)} is not an interval: at most one side is a duration`);
  }
  const side = (part: string, name: string): Date | undefined | IntervalReading => {
    if (part === OPEN) return undefined;
    const reading = readMoment(part, clock);
    return reading.moment ?? syntax(`the ${name} of ${JSON.stringify(text)}: ${reading.problem}`);
  };
  let start: Date | undefined;
  let end: Date | undefined;
  if (startSpan) {
    if (endText === OPEN)
      return syntax(`${JSON.stringify(text)}: a duration needs a moment beside it`);
    const read = side(endText, "end");
    if (!(read instanceof Date)) return read ?? syntax(text);
    end = read;
    start = shift(end, startSpan, -1, clock.timeZone);
  } else if (endSpan) {
    if (startText === OPEN)
      return syntax(`${JSON.stringify(text)}: a duration needs a moment beside it`);
    const read = side(startText, "start");
    if (!(read instanceof Date)) return read ?? syntax(text);
    start = read;
    end = shift(start, endSpan, 1, clock.timeZone);
  } else {
    const readStart = side(startText, "start");
    if (readStart !== undefined && !(readStart instanceof Date)) return readStart;
    const readEnd = side(endText, "end");
    if (readEnd !== undefined && !(readEnd instanceof Date)) return readEnd;
    start = readStart;
    end = readEnd;
  }
  if ((start && !withinYears(start)) || (end && !withinYears(end))) {
    return syntax(`${JSON.stringify(text)} reaches outside the years 1 to 9999`);
  }
  if (start && end && start.getTime() >= end.getTime()) {
    return {
      problem: {
        kind: "reversed",
        message: `${JSON.stringify(text)}: the start (${start.toISOString()}) is not before the end (${end.toISOString()})`,
        start,
        end,
      },
    };
  }
  return { interval: { start, end } };
}
