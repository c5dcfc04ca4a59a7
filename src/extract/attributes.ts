import type { Queryable } from "../db/index.ts";
import { parseGeneralizedTime } from "../capture/index.ts";
import type { DirectorySchema } from "../directory/index.ts";
import { ENTRY_VERSIONS } from "../../projections/entry-versions/index.ts";
import type { ColumnKind, ColumnSpec } from "./parquet.ts";

/**
 * An attribute given a column of its own in `entry_versions`. The query writes its values as
 * the JSON array the version holds (a list) or the first of them (a single-valued attribute),
 * and `read` converts each value to the column's type (null, and left out of a list, where
 * one does not convert).
 */
export interface AttributeColumn extends ColumnSpec {
  /** The attribute's name as the versions store it (the column's name may differ in case). */
  readonly attribute: string;
  readonly read: (text: string) => unknown;
}

/** The columns every version has; an attribute of one of these names stays in the JSON. */
export const VERSION_COLUMN_NAMES = new Set([
  "entry_uuid",
  "version",
  "dn",
  "type",
  "valid_from",
  "valid_to",
  "position",
  "attributes_other",
  "operational",
]);

const asText = (value: string): unknown => value;
const asInteger = (value: string): unknown => (/^-?\d+$/.test(value) ? BigInt(value) : null);
const asBoolean = (value: string): unknown =>
  value === "TRUE" ? true : value === "FALSE" ? false : null;
const asMoment = (value: string): unknown => parseGeneralizedTime(value) ?? null;

/**
 * The typed attribute columns of `entry_versions`: one per attribute that a version of a
 * configured type holds (`type` not null), typed by the directory's schema when it is known
 * (an integer syntax is INT64, a boolean BOOLEAN, generalized time a TIMESTAMP, the rest
 * strings; single-valued attributes a scalar, the others a LIST), or, without a schema, a
 * list of strings. Binary attributes, redacted ones and names that clash with a fixed column
 * stay in `attributes_other` (JSON), as do the attributes of entries of no configured type.
 */
export async function attributeColumns(
  db: Queryable,
  schema: DirectorySchema | undefined,
): Promise<AttributeColumn[]> {
  const names = await db.query<{ name: string }>(
    `SELECT DISTINCT k AS name FROM ${ENTRY_VERSIONS} AS v, jsonb_object_keys(v.attributes) AS k
      WHERE v.type IS NOT NULL AND NOT v.deleted ORDER BY 1`,
  );
  const byName = new Map<string, DirectorySchema["attributeTypes"][number]>();
  for (const type of schema?.attributeTypes ?? []) {
    for (const name of type.names) byName.set(name.toLowerCase(), type);
  }
  const taken = new Set(VERSION_COLUMN_NAMES);
  const columns: AttributeColumn[] = [];
  for (const { name } of names.rows) {
    const key = name.toLowerCase();
    // Parquet readers such as DuckDB match names without regard to case: one column a name.
    if (taken.has(key)) continue;
    const type = byName.get(key);
    if (type?.binary) continue;
    taken.add(key);
    const [kind, convert]: [ColumnKind, (value: string) => unknown] =
      type === undefined
        ? ["string", asText]
        : type.jsonType === "integer"
          ? ["int64", asInteger]
          : type.jsonType === "boolean"
            ? ["boolean", asBoolean]
            : type.format === "date-time"
              ? ["timestamp", asMoment]
              : ["string", asText];
    const list = !(type?.singleValued ?? false);
    columns.push({
      name: type?.names[0] ?? name,
      attribute: name,
      kind,
      list,
      read: list ? listReader(convert) : convert,
    });
  }
  return columns;
}

/** A list attribute's JSON array as its values converted, those that do not convert left out. */
function listReader(convert: (value: string) => unknown): (text: string) => unknown {
  if (convert === asText) return JSON.parse as (text: string) => unknown;
  return (text) => {
    const converted: unknown[] = [];
    for (const value of JSON.parse(text) as string[]) {
      const typed = convert(value);
      if (typed !== null) converted.push(typed);
    }
    return converted;
  };
}
