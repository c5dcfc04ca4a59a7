import { z } from "zod";
import { namedOnce } from "./named-once.ts";
import { CLOCK_TIME, knownHolidayRegion } from "../../time/index.ts";
import { text, timeZone } from "../fields.ts";

const NAME = /^[a-z][a-z0-9_-]*$/;
const ISO_DATE = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])$/;
const HOLIDAY_TYPES = ["public", "bank", "school", "optional", "observance"] as const;

function holidays() {
  return z
    .strictObject(
      {
        country: text()
          .regex(/^[A-Za-z]{2}$/, "expected a two-letter country code such as DE or US")
          .meta({
            description: "The country (ISO 3166-1 alpha-2) whose public holidays are days off.",
            example: "DE",
          }),
        region: text().optional().meta({
          description:
            "The region (state, province) within the country whose own holidays count too, as the date-holidays library names it (ISO 3166-2 without the country).",
          example: "BE",
        }),
        types: z
          .array(z.enum(HOLIDAY_TYPES))
          .default(["public"])
          .meta({
            description: "Which kinds of holiday are days off.",
            example: ["public", "bank"],
          }),
      },
      { error: "expected a table: [calendars.holidays]" },
    )
    .refine((h) => knownHolidayRegion(h.country, h.region), {
      message: "the holiday library knows no such country or region",
    })
    .meta({
      description:
        "Public holidays from the date-holidays library (country and region), computed for any year.",
    });
}

function calendar() {
  return z.strictObject(
    {
      name: text().regex(NAME, "expected a lowercase letter, then a-z, 0-9, _ or -").meta({
        description:
          'The name a deadline gives (`{ businessDays: 3, calendar: "de-be" }`). Names are unique.',
        example: "de-be",
      }),
      timeZone: timeZone().meta({
        description:
          "The zone working hours are read in; deadlines keep their wall-clock hour across daylight-saving changes.",
        example: "Europe/Berlin",
      }),
      workingDays: z
        .array(z.number().int().min(1).max(7))
        .min(1, "a calendar needs at least one working day")
        .default([1, 2, 3, 4, 5])
        .meta({
          description: "ISO weekdays that are working days: 1 Monday … 7 Sunday.",
          example: [1, 2, 3, 4],
        }),
      workingHours: z
        .string()
        .regex(/^\d{2}:\d{2}-\d{2}:\d{2}$/, "expected HH:MM-HH:MM, such as 09:00-17:00")
        .default("09:00-17:00")
        .transform((value, ctx) => {
          const [start = "", end = ""] = value.split("-");
          if (!CLOCK_TIME.test(start) || !CLOCK_TIME.test(end) || end <= start) {
            ctx.addIssue({
              code: "custom",
              message: "expected HH:MM-HH:MM with the end after the start, within one day",
            });
            return z.NEVER;
          }
          return { start, end };
        })
        .meta({
          description:
            'The working day on the wall clock. `"3bd"` is three working days of these hours; `"4bh"` four of these hours.',
          example: "08:00-16:30",
        }),
      holidays: holidays().optional(),
      dates: z
        .array(z.string().regex(ISO_DATE, "expected a date YYYY-MM-DD"))
        .default([])
        .meta({
          description: "Days off of one's own (a company holiday, a bridge day), as dates.",
          example: ["2026-12-24", "2026-12-31"],
        }),
      default: z.boolean().default(false).meta({
        description:
          'The calendar of a deadline that names none (`until: "3bd"`). Without one marked, the first calendar.',
        example: true,
      }),
    },
    { error: "expected a table: [[calendars]]" },
  );
}

export function calendarsSection() {
  return z
    .array(calendar(), { error: "expected an array of tables: [[calendars]]" })
    .default([])
    .superRefine((calendars, ctx) => {
      namedOnce(calendars, ctx);
      if (calendars.filter((c) => c.default).length > 1) {
        ctx.addIssue({ code: "custom", message: "only one calendar may be the default" });
      }
    })
    .meta({
      description:
        'Business calendars: working days and hours in a time zone, less holidays. Workflow deadlines count business time in them (`until: "3bd"`, `"4bh"`, `{ businessDays: 3, calendar: "de-be" }`); the moment is computed once, when the deadline is set, and recorded.',
    });
}

/** The resolved `[[calendars]]`. */
export type CalendarsConfig = z.output<ReturnType<typeof calendarsSection>>;
