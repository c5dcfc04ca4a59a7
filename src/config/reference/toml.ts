import { formatKeyPath } from "../key-path.ts";

/**
 * A value written as TOML, on one line: strings as basic strings, lists as arrays, tables as
 * inline tables.
 *
 * @example
 * tomlValue("2s"); // '"2s"'
 * tomlValue({ Authorization: "Bearer ${API_TOKEN}" }); // '{ Authorization = "Bearer ${API_TOKEN}" }'
 *
 * @throws Error for what TOML cannot hold (`null`, `undefined`, a number that is not finite).
 */
export function tomlValue(value: unknown): string {
  if (typeof value === "string") {
    // JSON escapes what a TOML basic string must escape, except DEL.
    return JSON.stringify(value).replaceAll("\u007f", "\\u007F");
  }
  if (typeof value === "boolean") return String(value);
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(", ")}]`;
  if (typeof value === "object" && value !== null && !(value instanceof Date)) {
    const entries = Object.entries(value).map(
      ([key, item]) => `${tomlKey(key)} = ${tomlValue(item)}`,
    );
    return entries.length === 0 ? "{}" : `{ ${entries.join(", ")} }`;
  }
  throw new Error(`TOML cannot hold ${String(value)}`);
}

/** A key as TOML writes it: bare when it can be, quoted otherwise. */
export function tomlKey(key: string): string {
  return formatKeyPath([key]);
}
