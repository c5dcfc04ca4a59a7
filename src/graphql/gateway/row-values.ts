/**
 * What a row of the projections brings to the gateway: the attributes a search selects, read
 * in the database (`valuesSql`, with the matched values of RFC 3876 from the value index now or
 * the value spans at a moment), and the directory entry made of the row (`entryOf`).
 */
import { shownText, type DirectoryEntry, type DirectorySchema } from "../../directory/index.ts";
import { typesOfSql, type FilterNode } from "../../filters/index.ts";
import { VALUE_KEY_LENGTH } from "../../../projections/entries/index.ts";

/**
 * Operational attributes the directory computes as it answers rather than stores: the
 * projection computes them too (`entryDN` is the row's DN, `hasSubordinates` whether a row
 * lies below it) and a filter on them goes to the directory.
 */
export const COMPUTED = new Set(["entrydn", "hassubordinates"]);

/** A row of a projection search: the entry's DN, its selected values, and whether it has children. */
export interface EntryRow {
  readonly dn: string;
  readonly values: Record<string, string[]>;
  readonly has_subordinates: boolean | null;
  /** A typed row's entry and version, when values of rows may be kept (`RowValues.known`). */
  readonly row_key?: string | null;
  /** The size of its stored attributes, in bytes (a string: bigint). */
  readonly stored?: string | number;
}

/**
 * Where `valuesSql` finds the folded values of the typed entries: the value index now, or the
 * spans of the versions' values at a moment.
 */
export type MatchedValuesIndex =
  | {
      /** The table of folded values (`entry_values`), annal's own constant. */
      readonly valuesTable: string;
      /** The types it holds rows of: those of `countsTable`'s rows of `rowAttribute`. */
      readonly countsTable: string;
      readonly rowAttribute: string;
    }
  | {
      /** The spans of the versions' values (`entry_version_values`), annal's own constant. */
      readonly spansTable: string;
      /** The parameter holding the moment (a timestamptz). */
      readonly at: string;
    };

/**
 * The attributes a row brings, chosen in the database: a group's thousands of members stay
 * there when no field reads them. Each named attribute is read by its key (`->`): the
 * projection keeps the schema's names (`canonicalName` at capture), so no key of the row is
 * folded or compared; a name the schema does not know is looked for among the keys, ignoring
 * case. The matched values (RFC 3876) of one attribute, when every equality item names that
 * one (the loaders' lookups by attribute), keep only its values that equal one of the items',
 * folded as the filters compare; other items keep every value. With `index`, a typed entry's
 * matched values are found in the value index (`index.valuesTable`) once for the statement,
 * a range per item's value, and picked out of its list by ordinal: a group of 40,000 members
 * costs what its matched values cost, not a fold of every member. At a moment (`index` names
 * the value spans), the values held then are found in the spans the same way; the spans keep
 * no ordinal, so each is the item as the list spells it (found by containment, no value
 * folded; two values of the list that fold alike then come as one), or, when the list spells
 * it otherwise, the list's values that fold to it. With `asAsked` (the search's
 * `matchedValuesAsAsked`), a typed entry's matched values are the items that matched, as the
 * items spell them, and its list is not read; its other values may then be kept between
 * searches (`known`).
 */
export function valuesSql(
  select: Selection,
  matchedValues: readonly FilterNode[] | undefined,
  bind: (value: unknown) => string,
  index?: MatchedValuesIndex,
  asAsked = false,
): RowValues {
  const both = "(e.attributes || e.operational)";
  if (select.allUser && select.allOperational) return { values: both, with: [] };
  const whole = [
    ...(select.allUser ? ["e.attributes"] : []),
    ...(select.allOperational ? ["e.operational"] : []),
  ];
  const equal = (matchedValues ?? []).flatMap((item) => (item.op === "eq" ? [item] : []));
  const matched = new Set(equal.map((item) => baseName(item.attribute)));
  // Items on an attribute the search does not return choose nothing (nor are they bound).
  const only =
    matched.size === 1 && !whole.length && select.names.has([...matched][0]!)
      ? [...matched][0]!
      : undefined;
  const common: string[] = [];
  const items = only === undefined ? "" : bind(equal.map((item) => item.value));
  /** A typed entry's items (one per folded value) that match a value it holds: `asked`. */
  let asked: string | undefined;
  /** Of the list `list` (a JSON array, or NULL) of attribute `name`: the values wanted. */
  const chosen = (name: string, list: string, key: string | undefined): string => {
    if (name !== only) return list;
    const folded = `(SELECT coalesce(jsonb_agg(v.value), '[]'::jsonb)
         FROM jsonb_array_elements_text(l.list) AS v(value)
        WHERE lower(v.value) = ANY(ARRAY(SELECT lower(w) FROM unnest(${items}::text[]) AS w)))`;
    let typed = folded;
    if (index !== undefined && key !== undefined) {
      const whole = "CASE WHEN x.value_folded IS NULL THEN x.value_key ELSE x.value_folded END";
      const spans = "spansTable" in index;
      // Of each entry: its folded values among the items (for the items as asked, and at a
      // moment), or, to pick the values out of its list now, their ordinals.
      const columns =
        spans || asAsked
          ? `array_agg(DISTINCT ${whole}) AS folded`
          : "array_agg(x.ordinal ORDER BY x.ordinal) AS ordinals";
      common.push(`matched AS MATERIALIZED (
         SELECT x.entry_uuid, ${columns}
           FROM ${spans ? index.spansTable : index.valuesTable} AS x
          WHERE x.type = ANY(${
            spans
              ? typesOfSql(index.spansTable)
              : `ARRAY(SELECT t.type FROM ${index.countsTable} AS t
                        WHERE t.attribute = ${bind(index.rowAttribute)}::text)`
          })
            AND x.attribute = ${key}::text
            AND x.value_key = ANY(ARRAY(SELECT left(lower(w), ${VALUE_KEY_LENGTH})
                                          FROM unnest(${items}::text[]) AS w))
            ${
              spans
                ? `AND x.valid_from <= ${index.at}::timestamptz
            AND coalesce(x.valid_to, 'infinity'::timestamptz) > ${index.at}::timestamptz`
                : ""
            }
            -- The whole value, compared so that no index is read for it: the trigram index
            -- answers equality too, and PostgreSQL took it over the ranges of the keys.
            AND ${whole} = ANY(ARRAY(SELECT lower(w) FROM unnest(${items}::text[]) AS w))
          GROUP BY x.entry_uuid)`);
      // The items that fold to a value the entry holds, one per value, as the items spell
      // them: no value of the list is read.
      const exact = `(SELECT jsonb_agg(i.w)
                        FROM (SELECT DISTINCT ON (lower(w)) w FROM unnest(${items}::text[]) AS w
                               WHERE lower(w) = ANY(m.folded) ORDER BY lower(w), w) AS i)`;
      asked = `(SELECT ${exact} FROM matched AS m WHERE m.entry_uuid = e.entry_uuid)`;
      // As the list spells them: at a moment, the spans keep no ordinal to pick the values by;
      // the items are those values when the list holds them as spelled (one test of
      // containment, no value folded), otherwise the list's values are folded and compared.
      // Now, the value index gives each value's ordinal in the list.
      typed = spans
        ? `coalesce((SELECT CASE WHEN l.list @> c.exact THEN c.exact ELSE ${folded} END
                       FROM matched AS m CROSS JOIN LATERAL (SELECT ${exact} AS exact) AS c
                      WHERE m.entry_uuid = e.entry_uuid), '[]'::jsonb)`
        : `coalesce((SELECT jsonb_agg(l.list -> o.ordinal ORDER BY o.n)
                       FROM matched AS m, unnest(m.ordinals) WITH ORDINALITY AS o(ordinal, n)
                      WHERE m.entry_uuid = e.entry_uuid), '[]'::jsonb)`;
    }
    // The list is read once (`OFFSET 0` keeps it a row of its own).
    const fromList = (typedValues: string) => `(SELECT CASE WHEN l.list IS NULL THEN NULL
                    WHEN e.type IS NULL THEN ${folded} ELSE ${typedValues} END
               FROM (SELECT ${list} AS list OFFSET 0) AS l)`;
    // Spelled as asked, a typed entry's values need not be read from its list at all.
    return asAsked && asked !== undefined
      ? `CASE WHEN e.type IS NULL THEN ${fromList(folded)} ELSE ${asked} END`
      : fromList(typed);
  };
  const known: string[] = [];
  const unknown: string[] = [];
  let onlyKey: string | undefined;
  for (const name of select.names) {
    if (COMPUTED.has(name)) continue; // computed, never read from the row
    const key = select.keys.get(name);
    if (key === undefined) {
      unknown.push(name);
      continue;
    }
    const bound = bind(key);
    if (name === only) onlyKey = bound;
    // An attribute is user or operational, never both; as `||` would, the operational wins.
    const list = `coalesce(r.operational -> ${bound}::text, r.attributes -> ${bound}::text)`;
    known.push(`${bound}::text, ${chosen(name, list, bound)}`);
  }
  const named = known.length ? [`jsonb_build_object(${known.join(", ")})`] : [];
  if (unknown.length) {
    const value = unknown.includes(only ?? "")
      ? `CASE WHEN lower(a.key) = ${bind(only)}::text THEN ${chosen(only!, "a.value", undefined)}
          ELSE a.value END`
      : "a.value";
    named.push(`coalesce((SELECT jsonb_object_agg(a.key, ${value})
                            FROM jsonb_each(r.attributes || r.operational) AS a
      WHERE lower(a.key) = ANY(${bind(unknown)}::text[])), '{}'::jsonb)`);
  }
  // The row's attributes are read once for every name: each `->` on a stored (compressed,
  // out-of-line) value would read and decompress it whole again, and a large group's are
  // megabytes (a page of people's groups cost tens of milliseconds of PostgreSQL's CPU). The
  // empty path (`#> '{}'`) hands back the value itself, read; `OFFSET 0` keeps the read a row
  // of its own rather than a reference the planner would put back.
  if (named.length) {
    named.splice(
      0,
      named.length,
      `(SELECT ${named.join(" || ")}
       FROM (SELECT e.attributes #> '{}'::text[] AS attributes,
                    e.operational #> '{}'::text[] AS operational OFFSET 0) AS r)`,
    );
  }
  const parts = [...named, ...whole];
  const values = parts.length ? parts.join(" || ") : "'{}'::jsonb";
  // What a typed row whose other values are known brings: the matched values, spelled as
  // asked, or nothing when every value is named whole.
  const kept =
    only === undefined
      ? { values: "'{}'::jsonb" }
      : asAsked && asked !== undefined && onlyKey !== undefined
        ? {
            values: `jsonb_build_object(${onlyKey}::text, ${asked})`,
            matched: select.keys.get(only)!,
          }
        : undefined;
  if (kept === undefined || whole.length) return { values, with: common };
  const signature = JSON.stringify([
    index === undefined ? "" : "spansTable" in index ? "versions" : "entries",
    [...select.names].sort(),
    only ?? "",
  ]);
  return { values, with: common, known: { ...kept, signature } };
}

/** A search's values as `valuesSql` reads them. */
export interface RowValues {
  /** The row's selected values (a JSON object). */
  readonly values: string;
  /** Common table expressions it needs. */
  readonly with: string[];
  /**
   * When a typed row's values but the matched ones can be kept between searches (the server
   * keeps them of rows whose stored attributes are large, by entry and version): `values`,
   * what such a row brings instead (the matched values of attribute `matched`, none else);
   * `signature`, which selection the kept values are of.
   */
  readonly known?: {
    readonly values: string;
    readonly matched?: string;
    readonly signature: string;
  };
}

export const baseName = (name: string): string => (name.split(";")[0] ?? name).toLowerCase();

/** Which attributes a search returns: by lower-case name, and the all-user and all-operational marks. */
export interface Selection {
  readonly names: ReadonlySet<string>;
  /** The key a name has in the projection's rows: the schema's spelling; none when unknown. */
  readonly keys: ReadonlyMap<string, string>;
  readonly allUser: boolean;
  readonly allOperational: boolean;
  readonly computed: ReadonlySet<string>;
}

/** The attributes asked for, as LDAP reads the list: none means every user attribute. */
export function selection(
  schema: DirectorySchema,
  attributes: readonly string[] | undefined,
): Selection {
  const asked = attributes ?? [];
  const names = new Set<string>();
  const keys = new Map<string, string>();
  let allUser = asked.length === 0;
  let allOperational = false;
  for (const name of asked) {
    if (name === "*") allUser = true;
    else if (name === "+") allOperational = true;
    else if (name !== "1.1") {
      const canonical = schema.canonical(baseName(name));
      const key = baseName(canonical ?? name);
      names.add(key);
      if (canonical !== undefined) keys.set(key, canonical);
    }
  }
  const computed = new Set(
    [...COMPUTED].filter((name) => allOperational || names.has(name.toLowerCase())),
  );
  return { names, keys, allUser, allOperational, computed };
}

/**
 * One row as the directory client gives an entry: the selected attributes, bytes for binary
 * ones asked as such (`@ldapField(binary: true)`); other binary values as the log keeps them
 * (base64), but for those AD's tools show as text (a SID `S-1-5-21-…`, objectGUID's GUID text).
 */
export function entryOf(
  schema: DirectorySchema,
  row: EntryRow,
  select: Selection,
  binary: ReadonlySet<string>,
): DirectoryEntry {
  const attributes: Record<string, string[] | Buffer[]> = {};
  for (const [name, values] of Object.entries(row.values)) {
    const key = baseName(name);
    if (COMPUTED.has(key)) continue;
    const operational = schema.isOperational(name);
    const wanted = select.names.has(key) || (operational ? select.allOperational : select.allUser);
    if (!wanted || !Array.isArray(values)) continue;
    const shown = binary.has(key) ? undefined : schema.shownAs(name);
    attributes[name] = binary.has(key)
      ? values.map((value) => Buffer.from(value, "base64"))
      : shown === undefined
        ? values
        : values.map((value) => shownText(shown, value));
  }
  if (select.computed.has("entrydn")) attributes.entryDN = [row.dn];
  if (select.computed.has("hassubordinates")) {
    attributes.hasSubordinates = [row.has_subordinates === true ? "TRUE" : "FALSE"];
  }
  return { dn: row.dn, attributes };
}
