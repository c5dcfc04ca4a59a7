import { z } from "zod";
import type { SearchRow } from "../search/page.ts";
import { defineFormat } from "./types.ts";

/**
 * RFC 2849 SAFE-STRING: no NUL, LF or CR, ASCII only, not starting with a space, `:` or `<`.
 * A value ending in a space is written base64 too, as the RFC recommends (it would be lost).
 */
const SAFE =
  /^(?:[\x01-\x09\x0b\x0c\x0e-\x1f\x21-\x39\x3b\x3d-\x7f][\x01-\x09\x0b\x0c\x0e-\x7f]*)?$/;

function line(name: string, value: string, binary: boolean): string {
  if (binary) return `${name}:: ${value}`;
  if (SAFE.test(value) && !value.endsWith(" ")) return `${name}: ${value}`;
  return `${name}:: ${Buffer.from(value, "utf8").toString("base64")}`;
}

/** Folds a line longer than `width` into continuation lines that start with one space. */
function fold(text: string, width: number): string {
  if (width === 0 || text.length <= width) return text;
  const parts = [text.slice(0, width)];
  for (let at = width; at < text.length; at += width - 1)
    parts.push(` ${text.slice(at, at + width - 1)}`);
  return parts.join("\n");
}

const WRAP_BOUNDS = "must be 0 or an integer from 16 to 10000";

/**
 * LDIF content records (RFC 2849): `version: 1`, then per entry its `dn` and the attributes
 * asked for, with the values as the directory holds them (generalized time, TRUE/FALSE), each
 * value on its own line; binary values and values that are not SAFE-STRINGs base64 (`::`).
 */
export const ldifFormat = defineFormat({
  name: "ldif",
  extensions: [".ldif"],
  options: z.strictObject({
    // A union rather than a refinement, so the OpenAPI document states the bounds too.
    wrap: z
      .union([z.literal(0), z.number().int().min(16, WRAP_BOUNDS).max(10_000, WRAP_BOUNDS)], {
        error: WRAP_BOUNDS,
      })
      .default(76)
      .describe("Fold lines longer than this many characters (RFC 2849); 0 for never."),
    version: z.boolean().default(true).describe('Start with the "version: 1" line.'),
  }),
  contentType: () => "text/x-ldif; charset=utf-8",
  writer(shape, options) {
    const record = (row: SearchRow) => {
      const lines = [fold(line("dn", row.dn, false), options.wrap)];
      for (const info of shape.selection.names) {
        const source = info.operational ? row.operational : row.attributes;
        for (const value of source?.[info.name] ?? []) {
          lines.push(fold(line(info.name, value, info.binary), options.wrap));
        }
      }
      return `${lines.join("\n")}\n\n`;
    };
    return {
      head: options.version ? "version: 1\n\n" : "",
      rows: (rows) => rows.map(record).join(""),
      tail: "",
    };
  },
});
