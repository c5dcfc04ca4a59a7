import { parseDuration } from "../config/index.ts";
import { AnnalError } from "../errors/index.ts";
import type { Until } from "./define.ts";

/** A duration in milliseconds: `"30s"`, `"3d"`, `"1d12h"`, or a number of milliseconds. */
export function durationMs(value: string | number, what: string): number {
  if (typeof value === "number") {
    if (Number.isFinite(value) && value >= 0) return value;
  } else {
    try {
      return parseDuration(value);
    } catch {
      // said below
    }
  }
  throw new AnnalError("WF_VALIDATION", `${what}: ${JSON.stringify(value)} is not a duration`, {
    hint: 'write a whole number with a unit, largest first: "30s", "5m", "3d", "1d12h"',
  });
}

/**
 * The moment `until` names, from `now`: a duration after it, or a moment (a Date, an ISO
 * 8601 string). `cap` (the enclosing deadline) is never exceeded: a child's or a dialog's
 * deadline ends at its instance's at the latest.
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
    const asMoment = /^\d{4}-\d{2}-\d{2}T/.test(until) ? Date.parse(until) : NaN;
    moment = Number.isNaN(asMoment) ? now.getTime() + durationMs(until, "until") : asMoment;
  }
  const capped = cap === null ? moment : Math.min(moment ?? Infinity, Date.parse(cap));
  return capped === undefined || !Number.isFinite(capped) ? null : new Date(capped).toISOString();
}

/** Whether `until` (ISO) has come at `now`. */
export function passed(until: string | null, now: Date): boolean {
  return until !== null && Date.parse(until) <= now.getTime();
}
