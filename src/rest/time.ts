import {
  type Clock,
  DURATION_FORMS,
  type Interval,
  INTERVAL_FORMS,
  readInterval,
  MOMENT_FORMS,
  readMoment,
  readSpan,
  shift,
  type Span,
  withinYears,
} from "../time/index.ts";
import { invalidParameter, RestError } from "./errors.ts";

/**
 * Moments and durations in query parameters (`at`, `since`, `range`), in the grammar of
 * `src/time/` (the same as GraphQL's and the command line's), read on a clock in a time zone
 * (`[rest] timeZone`, default UTC). A text that is none is `ANNAL_PARAMETER_INVALID` (400).
 */
export type { Clock, Interval, Span };
export { readSpan };

/** Reads a `range`-like parameter: a duration longer than zero. */
export function parseSpan(parameter: string, text: string): Span {
  const span = readSpan(text.trim());
  if (!span || (span.ms === 0 && span.months === 0)) {
    throw invalidParameter(parameter, `${JSON.stringify(text)} is not a duration`, {
      expected: DURATION_FORMS,
      hint: `write ${DURATION_FORMS}`,
    });
  }
  return span;
}

/** Reads a moment; throws `ANNAL_PARAMETER_INVALID` (400) naming the forms it accepts. */
export function parseMoment(parameter: string, text: string, clock: Clock): Date {
  const reading = readMoment(text, clock);
  if (reading.moment === undefined) {
    throw invalidParameter(parameter, reading.problem, {
      expected: MOMENT_FORMS,
      hint: `write ${MOMENT_FORMS}`,
    });
  }
  return reading.moment;
}

/**
 * The `occurred_at` window of `since` and `range`: since alone, from then on; range alone,
 * the last `range` up to now (and later); both, `range` from `since`.
 */
export function changeWindow(
  since: Date | undefined,
  range: Span | undefined,
  clock: Clock,
): { from?: Date; to?: Date } {
  if (!range) return since ? { from: since } : {};
  const window = since
    ? { from: since, to: shift(since, range, 1, clock.timeZone) }
    : { from: shift(clock.now, range, -1, clock.timeZone) };
  const end = window.to ?? window.from;
  if (!withinYears(end)) {
    throw invalidParameter(
      "range",
      `the range reaches ${since ? "past the year 9999 from since" : "before the year 1"}`,
      {
        expected: DURATION_FORMS,
        hint: "give a shorter range, or a since from which it stays within the years 1 to 9999",
      },
    );
  }
  return window;
}

/**
 * Reads an interval (`during`): `ANNAL_INTERVAL_INVALID` (400) for a text that is none,
 * `ANNAL_INTERVAL_REVERSED` (400) for one whose start is not before its end.
 */
export function parseInterval(parameter: string, text: string, clock: Clock): Interval {
  const reading = readInterval(text, clock);
  if (reading.interval) return reading.interval;
  const { problem } = reading;
  if (problem.kind === "reversed") {
    throw new RestError("ANNAL_INTERVAL_REVERSED", `${parameter}: ${problem.message}`, {
      hint: "give the earlier moment first; an interval is half-open, [start, end)",
      details: {
        parameter,
        start: problem.start.toISOString(),
        end: problem.end.toISOString(),
      },
    });
  }
  throw new RestError("ANNAL_INTERVAL_INVALID", `${parameter}: ${problem.message}`, {
    hint: `write ${INTERVAL_FORMS}`,
    details: { parameter, expected: INTERVAL_FORMS },
  });
}

/** Refuses two parameters given together: `ANNAL_PARAMETER_CONFLICT` (400). */
export function conflict(first: string, second: string, hint: string): RestError {
  return new RestError("ANNAL_PARAMETER_CONFLICT", `${first} and ${second} cannot go together`, {
    hint,
    details: { parameters: [first, second] },
  });
}
