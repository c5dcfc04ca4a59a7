import { formatInTimeZone, fromZonedTime } from "../time/index.ts";
import { invalidParameter } from "./errors.ts";

/**
 * Moments and durations in query parameters (`at`, `since`, `range`), read on a clock in a
 * time zone (`[rest] timeZone`, default UTC).
 *
 * A moment is one of:
 * - an ISO 8601 date or date-time: `2026-11-20`, `2026-11-20T10:00:00Z`,
 *   `2026-11-20T10:00:00.5+02:00`; without an offset it is read in the time zone, a date
 *   alone is the start of that day;
 * - `now`, or `now` minus or plus a duration: `now-1h`, `now-7d`, `now-1h30m`, `now-P1M`;
 * - a duration alone, meaning that long ago: `24h`, `P3D`;
 * - a phrase, in any letter case: `today`, `yesterday` (the start of that day), `this week`,
 *   `last week` (the start of that ISO week, Monday), `this month`, `last month`, `this year`,
 *   `last year` (the start of that period), `last 3 days` or `3 days ago` (that long before
 *   now: minutes, hours, days, weeks exactly; months and years by the calendar).
 *
 * A duration is compact (`90s`, `15m`, `24h`, `7d`, `2w`, combined largest first: `1h30m`)
 * or ISO 8601 (`PT15M`, `P1D`, `P1M`, `P1Y2M`, `P1DT12H`). Days and weeks are 24 and 168
 * hours; months and years follow the calendar in the time zone.
 */
export interface Clock {
  readonly now: Date;
  readonly timeZone: string;
}

/** A length of time: an exact part in milliseconds and a calendar part in months. */
export interface Span {
  readonly ms: number;
  readonly months: number;
}

const MOMENT_FORMS =
  "an ISO 8601 date or date-time (2026-11-20T10:00:00Z), now-<duration> (now-1h), a duration (24h, P1D), or a phrase: today, yesterday, this week, last week, this month, last month, this year, last year, last 3 days, 2 hours ago";
const DURATION_FORMS = "a duration such as 90s, 15m, 24h, 7d, 2w, 1h30m, PT15M, P1D or P1M";

const COMPACT_UNITS: Readonly<Record<string, number>> = {
  w: 604_800_000,
  d: 86_400_000,
  h: 3_600_000,
  m: 60_000,
  s: 1_000,
  ms: 1,
};
const COMPACT = /^(?:\d{1,9}(?:ms|w|d|h|m|s))+$/;
const COMPACT_PART = /(\d{1,9})(ms|w|d|h|m|s)/g;
const ISO_DURATION =
  /^P(?:(\d{1,9})Y)?(?:(\d{1,9})M)?(?:(\d{1,9})W)?(?:(\d{1,9})D)?(?:T(?:(\d{1,9})H)?(?:(\d{1,9})M)?(?:(\d{1,9})(?:[.,](\d{1,3}))?S)?)?$/;
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

/** Reads a duration, or undefined when `text` is not one. */
export function readSpan(text: string): Span | undefined {
  if (COMPACT.test(text)) {
    let ms = 0;
    let previous = Infinity;
    for (const [, amount, unit] of text.matchAll(COMPACT_PART)) {
      const size = COMPACT_UNITS[unit!]!;
      if (size >= previous) return undefined; // "30m1h" is a slip, not a sum
      previous = size;
      ms += Number(amount) * size;
    }
    return { ms, months: 0 };
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

/** `moment` moved by `span` (`sign` -1 back, +1 forward), months by the calendar in the zone. */
export function shift(moment: Date, span: Span, sign: 1 | -1, timeZone: string): Date {
  let result = new Date(moment.getTime() + sign * span.ms);
  if (span.months !== 0) {
    const wall = wallClock(result, timeZone);
    const monthIndex = wall.year * 12 + (wall.month - 1) + sign * span.months;
    const year = Math.floor(monthIndex / 12);
    const month = monthIndex - year * 12 + 1;
    const day = Math.min(wall.day, daysInMonth(year, month));
    if (year < 1 || year > 9999) return new Date(Number.NaN);
    result = zoned({ ...wall, year, month, day }, timeZone);
  }
  return result;
}

/** Reads a moment; throws `ANNAL_PARAMETER_INVALID` (400) naming the forms it accepts. */
export function parseMoment(parameter: string, text: string, clock: Clock): Date {
  const moment = readMoment(text.trim().replace(/\s+/g, " "), clock);
  const fail = (why: string) =>
    invalidParameter(parameter, why, { expected: MOMENT_FORMS, hint: `write ${MOMENT_FORMS}` });
  if (moment === undefined) throw fail(`${JSON.stringify(text)} is not a moment`);
  if (!withinYears(moment)) throw fail(`${JSON.stringify(text)} lies outside the years 1 to 9999`);
  return moment;
}

/** A real moment in the years 1 to 9999 (what PostgreSQL and the parameters can hold). */
function withinYears(moment: Date): boolean {
  const year = moment.getUTCFullYear();
  return !Number.isNaN(moment.getTime()) && year >= 1 && year <= 9999;
}

function readMoment(text: string, clock: Clock): Date | undefined {
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

interface Wall {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly ms: number;
  /** ISO weekday: 1 Monday … 7 Sunday. */
  readonly weekday: number;
}

function wallClock(moment: Date, timeZone: string): Wall {
  const [year, month, day, hour, minute, second, ms, weekday] = formatInTimeZone(
    moment,
    timeZone,
    "yyyy MM dd HH mm ss SSS i",
  )
    .split(" ")
    .map(Number);
  return {
    year: year!,
    month: month!,
    day: day!,
    hour: hour!,
    minute: minute!,
    second: second!,
    ms: ms!,
    weekday: weekday!,
  };
}

function zoned(wall: Pick<Wall, "year" | "month" | "day"> & Partial<Wall>, timeZone: string): Date {
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return fromZonedTime(
    `${pad(wall.year, 4)}-${pad(wall.month)}-${pad(wall.day)}T${pad(wall.hour ?? 0)}:${pad(wall.minute ?? 0)}:${pad(wall.second ?? 0)}.${pad(wall.ms ?? 0, 3)}`,
    timeZone,
  );
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The start of the day `days` before the wall date (calendar arithmetic, in UTC fields). */
function startOfDay(wall: Wall, days: number, timeZone: string): Date {
  const date = new Date(Date.UTC(wall.year, wall.month - 1, wall.day - days));
  return zoned(
    { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() },
    timeZone,
  );
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
