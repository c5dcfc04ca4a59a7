import { formatInTimeZone } from "../../../time/index.ts";
import { BadUserInputError } from "../../errors.ts";
import { current, eachValue, fieldArgument, type DirectiveCompiler } from "./site.ts";

const GENERALIZED_TIME =
  /^(\d{4})(\d{2})(\d{2})(\d{2})(?:(\d{2})(?:(\d{2}))?)?(?:[.,](\d{1,6}))?(Z|[+-]\d{2}(?:\d{2})?)$/;

/** An LDAP GeneralizedTime (RFC 4517 §3.3.13) as a Date; undefined when it is not one. */
export function parseGeneralizedTime(text: string): Date | undefined {
  const match = GENERALIZED_TIME.exec(text.trim());
  if (!match) return undefined;
  const [, year, month, day, hour, minute = "00", second = "00", fraction = "", zone = "Z"] = match;
  const offset = zone === "Z" ? "Z" : `${zone.slice(0, 3)}:${zone.slice(3, 5) || "00"}`;
  const ms = fraction === "" ? "" : `.${fraction.padEnd(3, "0").slice(0, 3)}`;
  const date = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}${ms}${offset}`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function toDate(value: unknown): Date | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value;
  if (typeof value === "number") return new Date(value);
  if (typeof value !== "string" || value === "") return undefined;
  const generalized = parseGeneralizedTime(value);
  if (generalized !== undefined) return generalized;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** `@ldapTimestamp`: `20261122153000Z` → `2026-11-22T15:30:00.000Z`. */
export const ldapTimestamp: DirectiveCompiler = (site) => (input) =>
  eachValue(current(site, input), (item) => {
    if (item instanceof Date) return item.toISOString();
    return typeof item === "string" ? (parseGeneralizedTime(item)?.toISOString() ?? null) : null;
  });

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * `@formatDateTime(format, timeZone)`: date-fns-tz's `formatInTimeZone`. Field arguments
 * `format` and `timeZone` (or `timezone`) override the directive's.
 */
export const formatDateTime: DirectiveCompiler = (site) => {
  const defaultFormat = String(site.args.format ?? "yyyy-MM-dd'T'hh:mm:ssZ");
  const defaultZone = String(site.args.timeZone ?? "UTC");
  return (input) => {
    const format = String(fieldArgument(input, "format") ?? defaultFormat);
    const zone = String(
      fieldArgument(input, "timeZone") ?? fieldArgument(input, "timezone") ?? defaultZone,
    );
    if (!isTimeZone(zone)) {
      throw new BadUserInputError("Invalid timeZone", {
        argument: "timeZone",
        hint: 'name an IANA time zone such as "UTC" or "Europe/Berlin"',
      });
    }
    return eachValue(current(site, input), (item) => {
      const date = toDate(item);
      if (date === undefined) return null;
      try {
        return formatInTimeZone(date, zone, format);
      } catch (error) {
        throw new BadUserInputError("Invalid format", {
          argument: "format",
          hint: `a date-fns pattern such as "yyyy-MM-dd HH:mm" (${(error as Error).message})`,
        });
      }
    });
  };
};
