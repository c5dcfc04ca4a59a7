import { AnnalError } from "../errors/index.ts";
import {
  durationMs as readDurationMs,
  EXACT_DURATION_FORMS,
  readIsoMoment,
} from "../time/index.ts";
import type { Until } from "./define.ts";

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

/**
 * The moment `until` names, from `now`: a duration after it, or a moment (a Date, an ISO
 * 8601 date-time; one without an offset is read in UTC, never in the machine's zone).
 * `cap` (the enclosing deadline) is never exceeded: a child's or a dialog's deadline ends at
 * its instance's at the latest.
 */
export function deadline(
  until: Until | undefined,
  now: Date,
  cap: string | null = null,
): string | null {
  let moment: number | undefined;
  if (until instanceof Date) moment = until.getTime();
  else if (typeof until === "number") moment = now.getTime() + durationMs(until, "until");
  else if (typeof until === "string") {
    const asMoment = /^\d{4}-\d{2}-\d{2}T/.test(until) ? readIsoMoment(until, "UTC") : undefined;
    moment = asMoment?.getTime() ?? now.getTime() + durationMs(until, "until");
  }
  const capped = cap === null ? moment : Math.min(moment ?? Infinity, Date.parse(cap));
  return capped === undefined || !Number.isFinite(capped) ? null : new Date(capped).toISOString();
}

/** Whether `until` (ISO) has come at `now`. */
export function passed(until: string | null, now: Date): boolean {
  return until !== null && Date.parse(until) <= now.getTime();
}
