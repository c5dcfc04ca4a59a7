import { daysInMonth, shift, startOfDay, wallClock, withinYears, zoned } from "./calendar.ts";
import { readSpan, type Span } from "./durations.ts";
import { fromZonedTime } from "./zones.ts";

/**
 * Moments, one grammar for the REST channel, GraphQL and the command line. A moment is one of:
 * - an ISO 8601 date or date-time: `2026-11-20`, `2026-11-20T10:00:00Z`,
 *   `2026-11-20T10:00:00.5+02:00`; without an offset it is read in the clock's time zone, a
 *   date alone is the start of that day;
 * - `now`, or `now` minus or plus a duration: `now-1h`, `now+2h`, `now-7d`, `now-1h30m`,
 *   `now-P1M`;
 * - a duration alone, meaning that long ago: `24h`, `P3D`;
 * - a phrase, in any letter case: `today`, `yesterday` (the start of that day), `this week`,
 *   `last week` (the start of that ISO week, Monday), `this month`, `last month`, `this year`,
 *   `last year` (the start of that period), `last 3 days` or `3 days ago` (that long before
 *   now: seconds, minutes, hours, days, weeks exactly; months and years by the calendar).
 *
 * Blanks around the text and between words do not matter. Durations are those of
 * `durations.ts`; months and years follow the calendar in the time zone.
 */
export interface Clock {
  readonly now: Date;
  /** The IANA zone in which dates, times without an offset and phrases are read. */
  readonly timeZone: string;
}

/** What a moment may be written as, for messages and hints. */
export const MOMENT_FORMS =
  "an ISO 8601 date or date-time (2026-11-20T10:00:00Z), now, now-<duration> or now+<duration> (now-1h), a duration meaning that long ago (24h, P1D), or a phrase: today, yesterday, this week, last week, this month, last month, this year, last year, last 3 days, 2 hours ago";

/** A moment read, or why the text is none. */
export type MomentReading =
  | { readonly moment: Date; readonly problem?: undefined }
  | { readonly moment?: undefined; readonly problem: string };

const ISO_MOMENT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

const PHRASE_UNITS: Readonly<Record<string, Span>> = {
  second: { ms: 1_000, months: 0 },
  minute: { ms: 60_000, months: 0 },
  hour: { ms: 3_600_000, months: 0 },
  day: { ms: 86_400_000, months: 0 },
  week: { ms: 604_800_000, months: 0 },
  month: { ms: 0, months: 1 },
  year: { ms: 0, months: 12 },
};

/**
 * Reads a moment on `clock`; a text that is none, or one outside the years 1 to 9999, says why.
 *
 * @example
 * readMoment("now-1m", { now: new Date("2026-11-22T15:30:00Z"), timeZone: "UTC" });
 * // { moment: 2026-11-22T15:29:00.000Z }
 */
export function readMoment(text: string, clock: Clock): MomentReading {
  const moment = momentOf(text.trim().replace(/\s+/g, " "), clock);
  if (moment === undefined) return { problem: `${JSON.stringify(text)} is not a moment` };
  if (!withinYears(moment)) {
    return { problem: `${JSON.stringify(text)} lies outside the years 1 to 9999` };
  }
  return { moment };
}

/**
 * Reads an ISO 8601 date or date-time alone (no `now`, durations or phrases), one without an
 * offset in `timeZone`; undefined when `text` is none.
 */
export function readIsoMoment(text: string, timeZone: string): Date | undefined {
  const iso = ISO_MOMENT.exec(text.trim());
  const moment = iso ? isoMoment(iso, timeZone) : undefined;
  return moment && withinYears(moment) ? moment : undefined;
}

function momentOf(text: string, clock: Clock): Date | undefined {
  const { now, timeZone } = clock;
  const lower = text.toLowerCase();
  if (lower === "now") return now;
  const relative = /^now ?([+-]) ?(\S+)$/.exec(lower);
  if (relative) {
    const span = readSpan(relative[2]!);
    return span && shift(now, span, relative[1] === "+" ? 1 : -1, timeZone);
  }
  const span = readSpan(text);
  if (span) return shift(now, span, -1, timeZone);
  const iso = ISO_MOMENT.exec(text);
  if (iso) return isoMoment(iso, timeZone);
  return phrase(lower, clock);
}

function isoMoment(match: RegExpExecArray, timeZone: string): Date | undefined {
  const [, y, mo, d, h = "00", mi = "00", s = "00", fraction = "", offset] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
  const ms = fraction.padEnd(3, "0").slice(0, 3);
  const local = `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}`;
  if (offset === undefined) return fromZonedTime(local, timeZone);
  if (offset.toUpperCase() === "Z") return new Date(`${local}Z`);
  const digits = offset.replace(":", "");
  const hours = Number(digits.slice(1, 3));
  const minutes = Number(digits.slice(3, 5) || "0");
  if (hours > 23 || minutes > 59) return undefined;
  const sign = offset.startsWith("-") ? 1 : -1;
  return new Date(new Date(`${local}Z`).getTime() + sign * (hours * 60 + minutes) * 60_000);
}

function phrase(text: string, clock: Clock): Date | undefined {
  const { now, timeZone } = clock;
  const wall = wallClock(now, timeZone);
  switch (text) {
    case "today":
      return startOfDay(wall, 0, timeZone);
    case "yesterday":
      return startOfDay(wall, 1, timeZone);
    case "this week":
      return startOfDay(wall, wall.weekday - 1, timeZone);
    case "last week":
      return startOfDay(wall, wall.weekday - 1 + 7, timeZone);
    case "this month":
      return zoned({ year: wall.year, month: wall.month, day: 1 }, timeZone);
    case "last month":
      return wall.month === 1
        ? zoned({ year: wall.year - 1, month: 12, day: 1 }, timeZone)
        : zoned({ year: wall.year, month: wall.month - 1, day: 1 }, timeZone);
    case "this year":
      return zoned({ year: wall.year, month: 1, day: 1 }, timeZone);
    case "last year":
      return zoned({ year: wall.year - 1, month: 1, day: 1 }, timeZone);
  }
  const rolling =
    /^last (\d{1,9}) (second|minute|hour|day|week|month|year)s?$/.exec(text) ??
    /^(\d{1,9}) (second|minute|hour|day|week|month|year)s? ago$/.exec(text);
  if (!rolling) return undefined;
  const unit = PHRASE_UNITS[rolling[2]!]!;
  const count = Number(rolling[1]);
  return shift(now, { ms: unit.ms * count, months: unit.months * count }, -1, timeZone);
}
