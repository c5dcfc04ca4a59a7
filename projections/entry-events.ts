import type { EntryState } from "../src/events/index.ts";

/** The first value of an operational timestamp (`20261122043500Z`) as a Date, if any. */
export function operationalTime(state: EntryState | null, name: string): Date | undefined {
  return generalizedTime(state?.operational[name]?.[0]);
}

/** A generalized time (`20261122043500Z`, fractions allowed) as a Date; undefined for others. */
export function generalizedTime(value: string | undefined | null): Date | undefined {
  const match = value && /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:[.,](\d+))?Z$/.exec(value);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, fraction] = match;
  const ms = fraction ? Math.round(Number(`0.${fraction}`) * 1000) : 0;
  return new Date(Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s!, ms));
}
