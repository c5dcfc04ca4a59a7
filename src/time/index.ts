/**
 * Time: the one grammar of moments (`2026-11-20T10:00:00Z`, `now-1h`, `yesterday`) and
 * durations (`30s`, `1w`, `PT5M`) that every channel, the command line, the configuration,
 * hooks and workflows read; and date-fns-tz's zone functions, loaded lightly.
 */
export {
  BusinessCalendar,
  type BusinessSpan,
  type CalendarSpec,
  Calendars,
  calendarsOf,
  CLOCK_TIME,
  knownHolidayRegion,
} from "./business.ts";
export { shift, withinYears } from "./calendar.ts";
export {
  DURATION_FORMS,
  durationMs,
  EXACT_DURATION_FORMS,
  readSpan,
  type Span,
} from "./durations.ts";
export {
  type Clock,
  MOMENT_FORMS,
  type MomentReading,
  readIsoMoment,
  readMoment,
} from "./moments.ts";
export {
  type Interval,
  INTERVAL_FORMS,
  type IntervalProblem,
  type IntervalReading,
  readInterval,
} from "./intervals.ts";
export { formatInTimeZone, fromZonedTime } from "./zones.ts";
