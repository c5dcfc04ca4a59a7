import { AnnalError } from "../errors/index.ts";
import {
  durationMs as readDurationMs,
  EXACT_DURATION_FORMS,
  readIsoMoment,
} from "../time/index.ts";
import type { BusinessSpan, Calendars } from "../time/index.ts";
import type { BusinessUntil, Until } from "./define.ts";

/**
 * A duration in milliseconds, in the grammar of `src/time/` (`"30s"`, `"3d"`, `"1w"`,
 * `"1d12h"`, `"PT5M"`, `"P3D"`), or a number of milliseconds.
 */
export function durationMs(value: string | number, what: string): number {
  const ms =
    typeof value === "number"
      ? Number.isFinite(value) && value >= 0
        ? value
        : undefined
      : readDurationMs(value);
  if (ms !== undefined) return ms;
  throw new AnnalError("WF_VALIDATION", `${what}: ${JSON.stringify(value)} is not a duration`, {
    hint: `write ${EXACT_DURATION_FORMS}`,
  });
}

const BUSINESS = /^(\d{1,4})(bd|bh)$/;

/**
 * The moment `until` names, from `now`: a duration after it, business time after it in one
 * of `calendars`, or a moment (a Date, an ISO 8601 date-time; one without an offset is read
 * in UTC, never in the machine's zone). `cap` (the enclosing deadline) is never exceeded: a
 * child's or a dialog's deadline ends at its instance's at the latest. The moment is computed
 * once, when the deadline is set, and recorded: a calendar changed later does not move it.
 */
export function deadline(
  until: Until | undefined,
  now: Date,
  cap: string | null = null,
  calendars?: Calendars,
): string | null {
  let moment: number | undefined;
  if (until instanceof Date) moment = until.getTime();
  else if (typeof until === "number") moment = now.getTime() + durationMs(until, "until");
  else if (typeof until === "string") {
    const business = BUSINESS.exec(until);
    const asMoment = /^\d{4}-\d{2}-\d{2}T/.test(until) ? readIsoMoment(until, "UTC") : undefined;
    moment = business
      ? businessMoment(
          business[2] === "bd" ? { days: Number(business[1]) } : { hours: Number(business[1]) },
          undefined,
          now,
          calendars,
        )
      : (asMoment?.getTime() ?? now.getTime() + durationMs(until, "until"));
  } else if (until !== undefined) {
    moment = businessMoment(businessSpan(until), until.calendar, now, calendars);
  }
  const capped = cap === null ? moment : Math.min(moment ?? Infinity, Date.parse(cap));
  return capped === undefined || !Number.isFinite(capped) ? null : new Date(capped).toISOString();
}

function businessSpan(until: BusinessUntil): BusinessSpan {
  const { businessDays = 0, businessHours = 0 } = until as {
    businessDays?: unknown;
    businessHours?: unknown;
  };
  for (const [key, value] of Object.entries({ businessDays, businessHours })) {
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 9_999) {
      throw new AnnalError("WF_VALIDATION", `until: ${key} must be a whole number from 0 to 9999`, {
        hint: 'write e.g. { businessDays: 3 } or { businessHours: 4, calendar: "de-be" }',
      });
    }
  }
  return { days: businessDays as number, hours: businessHours as number };
}

function businessMoment(
  span: BusinessSpan,
  name: string | undefined,
  now: Date,
  calendars: Calendars | undefined,
): number {
  const calendar = calendars?.get(name);
  if (!calendar) {
    const known = calendars?.names ?? [];
    throw new AnnalError(
      "WF_VALIDATION",
      name === undefined
        ? "until: business time needs a calendar, and none is configured"
        : `until: no calendar is named "${name}"`,
      {
        hint:
          known.length === 0
            ? "add a [[calendars]] table to annal.toml (docs/workflows.md, Business time)"
            : `the configured calendars: ${known.join(", ")}`,
      },
    );
  }
  return calendar.add(now, span).getTime();
}

/** Whether `until` (ISO) has come at `now`. */
export function passed(until: string | null, now: Date): boolean {
  return until !== null && Date.parse(until) <= now.getTime();
}
