import { createRequire } from "node:module";
import type HolidaysLibrary from "date-holidays";
import { wallClock, zoned } from "./calendar.ts";

// date-holidays holds every country's rules (a fifth of a second to load): loaded on the first
// calendar that names a country, so a process without one never pays for it.
const require = createRequire(import.meta.url);
let library: typeof HolidaysLibrary | undefined;
function holidaysOf(country?: string, region?: string): HolidaysLibrary {
  library ??= require("date-holidays") as typeof HolidaysLibrary;
  if (country === undefined) return new library();
  return region === undefined ? new library(country) : new library(country, region);
}

/**
 * Business time: working days and hours on the wall clock of a time zone, less public
 * holidays (from the date-holidays library, by country and region) and dates of one's own.
 * A deadline of "3 business days" is three working days' worth of working time after the
 * moment it is set, counted through working hours only: set on Friday at 10:00 with hours
 * 09:00–17:00, it falls on Wednesday at 10:00; set on a Saturday, on Wednesday at 17:00.
 * Working hours are wall-clock hours, so a daylight-saving change moves the deadline's UTC
 * offset, never its hour on the wall.
 */
export interface CalendarSpec {
  readonly name: string;
  readonly timeZone: string;
  /** ISO weekdays that are working days: 1 Monday … 7 Sunday. */
  readonly workingDays: readonly number[];
  /** The working day on the wall clock, `HH:MM` to `HH:MM`. */
  readonly workingHours: { readonly start: string; readonly end: string };
  /** Public holidays by country (ISO 3166-1) and region, of the given types. */
  readonly holidays?: {
    readonly country: string;
    readonly region?: string | undefined;
    readonly types: readonly string[];
  };
  /** Days off of one's own, `YYYY-MM-DD`. */
  readonly dates: readonly string[];
}

/** An amount of business time: whole working days, working hours, or both. */
export interface BusinessSpan {
  readonly days?: number;
  readonly hours?: number;
}

// Ten years of days: a calendar with no working day in it is refused before this is reached.
const MAX_DAYS = 3_660;

export class BusinessCalendar {
  readonly spec: CalendarSpec;
  readonly #start: { hour: number; minute: number };
  readonly #end: { hour: number; minute: number };
  readonly #holidays: HolidaysLibrary | undefined;
  readonly #daysOff = new Map<number, ReadonlyMap<string, string>>();

  constructor(spec: CalendarSpec) {
    this.spec = spec;
    this.#start = clockTime(spec.workingHours.start);
    this.#end = clockTime(spec.workingHours.end);
    if (spec.holidays) {
      const { country, region } = spec.holidays;
      this.#holidays = holidaysOf(country, region);
    }
  }

  /** The length of one working day in milliseconds. */
  get dayMs(): number {
    return (
      (this.#end.hour - this.#start.hour) * 3_600_000 +
      (this.#end.minute - this.#start.minute) * 60_000
    );
  }

  /** Why a wall date is no working day (a holiday's name, "weekend"), or undefined if it is one. */
  dayOff(year: number, month: number, day: number): string | undefined {
    const weekday = new Date(Date.UTC(year, month - 1, day)).getUTCDay() || 7;
    if (!this.spec.workingDays.includes(weekday)) return "not a working day";
    return this.#daysOffOf(year).get(isoDate(year, month, day));
  }

  /** The moment `span` of working time after `from`. */
  add(from: Date, span: BusinessSpan): Date {
    let remaining = (span.days ?? 0) * this.dayMs + (span.hours ?? 0) * 3_600_000;
    if (remaining <= 0) return from;
    const first = wallClock(from, this.spec.timeZone);
    for (let offset = 0; offset < MAX_DAYS; offset++) {
      const date = new Date(Date.UTC(first.year, first.month - 1, first.day + offset));
      const year = date.getUTCFullYear();
      const month = date.getUTCMonth() + 1;
      const day = date.getUTCDate();
      if (this.dayOff(year, month, day) !== undefined) continue;
      const opens = zoned({ year, month, day, ...this.#start }, this.spec.timeZone).getTime();
      const closes = zoned({ year, month, day, ...this.#end }, this.spec.timeZone).getTime();
      const begin = Math.max(opens, from.getTime());
      if (begin >= closes) continue;
      if (remaining <= closes - begin) return new Date(begin + remaining);
      remaining -= closes - begin;
    }
    throw new RangeError(`calendar "${this.spec.name}" has no working time in ten years`);
  }

  #daysOffOf(year: number): ReadonlyMap<string, string> {
    let days = this.#daysOff.get(year);
    if (!days) {
      const found = new Map<string, string>();
      const types = new Set(this.spec.holidays?.types ?? []);
      for (const holiday of this.#holidays?.getHolidays(year) ?? []) {
        if (types.has(holiday.type)) found.set(holiday.date.slice(0, 10), holiday.name);
      }
      for (const date of this.spec.dates) {
        if (date.startsWith(`${year}-`)) found.set(date, "a day off of the calendar's own");
      }
      days = found;
      this.#daysOff.set(year, days);
    }
    return days;
  }
}

/** The configured calendars by name, and the one a deadline without a name counts in. */
export class Calendars {
  readonly #byName: ReadonlyMap<string, BusinessCalendar>;
  readonly #default: string | undefined;

  constructor(specs: readonly CalendarSpec[], defaultName: string | undefined = specs[0]?.name) {
    this.#byName = new Map(specs.map((spec) => [spec.name, new BusinessCalendar(spec)]));
    this.#default = defaultName;
  }

  get names(): readonly string[] {
    return [...this.#byName.keys()];
  }

  /** The named calendar, or the default one without a name; undefined when there is none. */
  get(name?: string): BusinessCalendar | undefined {
    const wanted = name ?? this.#default;
    return wanted === undefined ? undefined : this.#byName.get(wanted);
  }
}

/** The calendars of `[[calendars]]`: the one marked `default`, else the first, is the default. */
export function calendarsOf(
  configured: readonly (Omit<CalendarSpec, "holidays"> & {
    readonly default: boolean;
    readonly holidays?:
      | {
          readonly country: string;
          readonly region?: string | undefined;
          readonly types: readonly string[];
        }
      | undefined;
  })[],
): Calendars {
  const specs = configured.map(({ default: _default, holidays, ...spec }) => ({
    ...spec,
    ...(holidays ? { holidays } : {}),
  }));
  return new Calendars(specs, (configured.find((c) => c.default) ?? configured[0])?.name);
}

/** Whether date-holidays knows the country, and the region in it when one is given. */
export function knownHolidayRegion(country: string, region?: string): boolean {
  const countries = holidaysOf().getCountries() as Record<string, string> | undefined;
  if (!countries?.[country.toUpperCase()]) return false;
  if (region === undefined) return true;
  const regions = holidaysOf().getStates(country) as Record<string, string> | undefined;
  return Boolean(regions?.[region.toUpperCase()]);
}

/** `HH:MM`, 00:00 to 23:59. */
export const CLOCK_TIME = /^(?:[01]\d|2[0-3]):[0-5]\d$/;

function clockTime(text: string): { hour: number; minute: number } {
  const [hour, minute] = text.split(":").map(Number);
  return { hour: hour!, minute: minute! };
}

function isoDate(year: number, month: number, day: number): string {
  return `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
}
