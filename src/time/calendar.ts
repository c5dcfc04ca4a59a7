import type { Span } from "./durations.ts";
import { formatInTimeZone, fromZonedTime } from "./zones.ts";

/** A moment's fields on the wall clock of a time zone. */
export interface Wall {
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

export function wallClock(moment: Date, timeZone: string): Wall {
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

/** The moment a wall clock in `timeZone` shows these fields (missing ones are zero). */
export function zoned(
  wall: Pick<Wall, "year" | "month" | "day"> & Partial<Wall>,
  timeZone: string,
): Date {
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return fromZonedTime(
    `${pad(wall.year, 4)}-${pad(wall.month)}-${pad(wall.day)}T${pad(wall.hour ?? 0)}:${pad(wall.minute ?? 0)}:${pad(wall.second ?? 0)}.${pad(wall.ms ?? 0, 3)}`,
    timeZone,
  );
}

export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The start of the day `days` before the wall date (calendar arithmetic, in UTC fields). */
export function startOfDay(wall: Wall, days: number, timeZone: string): Date {
  const date = new Date(Date.UTC(wall.year, wall.month - 1, wall.day - days));
  return zoned(
    { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() },
    timeZone,
  );
}

/**
 * `moment` moved by `span` (`sign` -1 back, +1 forward): the exact part in milliseconds, the
 * months by the calendar in the zone (31 January + 1 month is 28 or 29 February). A result
 * outside the years 1 to 9999 is an invalid Date.
 */
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

/** A real moment in the years 1 to 9999 (what PostgreSQL and the channels can hold). */
export function withinYears(moment: Date): boolean {
  const year = moment.getUTCFullYear();
  return !Number.isNaN(moment.getTime()) && year >= 1 && year <= 9999;
}
