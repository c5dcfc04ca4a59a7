/**
 * GraphQL compiled to SQL: an operation of the shapes the gateway's resolvers answer from the
 * `entries` projection (a connection of `@ldapSearch`, its nodes' `@ldapField` values and
 * their `@ldapFindByAttribute` lists, `first`/`after`, `where`, `by`, `q`, `totalCount`,
 * `pageInfo`) answered by ONE statement whose result holds the response's JSON, built by
 * PostgreSQL and never parsed in Node. Anything else (other fields and directives,
 * fragments, `@at`, errors, a read the projection would not answer) is left to the resolvers,
 * the whole operation at once: `compiledRead` answers undefined for it.
 */
import { getArgumentValues, getVariableValues, type ExecutionArgs } from "graphql";
import { and, eq, normalizeDN, or, renderFilter } from "../../directory/index.ts";
import { assertAccess } from "../../auth/index.ts";
import type { FilterNode } from "../../filters/index.ts";
import { ENTRIES, ENTRY_VALUES, VALUE_KEY_LENGTH } from "../../../projections/entries/index.ts";
import { encodeCursor, pageRequest } from "../connection.ts";
import type { GatewayContext } from "../context.ts";
import type { StepInput } from "./directives/index.ts";
import { baseDN, searchFilter } from "./directives/search-spec.ts";
import { LARGE_STORED_BYTES } from "./known-values.ts";
import {
  coveredFilter,
  matchingEntries,
  scopeSql,
  type ProjectionSource,
} from "./projection-reads.ts";
import { baseName } from "./row-values.ts";
import {
  planOf,
  type CompiledReads,
  type Leaf,
  type Lookup,
  type NodeField,
  type Plan,
} from "./compile-plan.ts";

export type { CompiledReads };

/** The response's `data` as JSON text built by PostgreSQL, spliced into the answer as it is. */
export class CompiledData {
  readonly json: string;
  constructor(json: string) {
    this.json = json;
  }
}

/** How many operations were answered compiled, and how many left to the resolvers. */
export const compileStats = { compiled: 0, resolved: 0 };

/**
 * The operation's answer from one statement, or undefined when it is not of a shape the
 * compiler knows, or the request may not be answered so (the resolvers then run it whole,
 * and give whatever error it has).
 */
export async function compiledRead(
  args: ExecutionArgs,
  reads: CompiledReads,
): Promise<{ data: CompiledData } | undefined> {
  const context = args.contextValue as GatewayContext;
  const plan = planOf(args, reads);
  if (plan === undefined) return undefined;
  try {
    assertAccess(context.viewer, "read"); // as each root field's resolver checks it
  } catch {
    return undefined;
  }
  const statement = buildStatement(plan, args, context, reads);
  if (statement === undefined) return undefined;
  const result = await reads.source.db.query<{
    nodes: string | null;
    node_count: string;
    has_next: boolean;
    read: string;
    looked_up: string;
    total: string | null;
    complete: boolean;
    learned: string | null;
  }>(statement.sql, statement.params);
  const row = result.rows[0]!;
  if (row.learned !== null && statement.learning !== undefined) {
    learn(reads.source, statement.learning, row.learned);
  }
  const spent = Number(row.read) + Number(row.looked_up) + Number(row.total ?? 0);
  if (!row.complete || reads.spent.read + spent > reads.maxEntries) return undefined;
  reads.spent.read += spent;
  const { search } = plan;
  const nodeCount = Number(row.node_count);
  const { offset } = statement.page;
  const parts = search.parts.map((part) => {
    switch (part.kind) {
      case "nodes":
        return `${JSON.stringify(part.key)}:${row.nodes ?? "[]"}`;
      case "totalCount":
        return `${JSON.stringify(part.key)}:${Number(row.total)}`;
      case "typename":
        return `${JSON.stringify(part.key)}:${JSON.stringify(part.name)}`;
      case "pageInfo": {
        const info: Record<string, unknown> = {
          hasNextPage: row.has_next,
          hasPreviousPage: offset > 0,
          startCursor: nodeCount === 0 ? null : encodeCursor(offset, statement.cursorScope),
          endCursor:
            nodeCount === 0 ? null : encodeCursor(offset + nodeCount, statement.cursorScope),
          __typename: "PageInfo",
        };
        const fields = part.fields.map(
          ({ key, name }) => `${JSON.stringify(key)}:${JSON.stringify(info[name])}`,
        );
        return `${JSON.stringify(part.key)}:{${fields.join(",")}}`;
      }
    }
  });
  const roots = plan.roots.map((root) =>
    root.kind === "typename"
      ? `${JSON.stringify(root.key)}:"Query"`
      : `${JSON.stringify(search.key)}:{${parts.join(",")}}`,
  );
  return { data: new CompiledData(`{${roots.join(",")}}`) };
}

/** Values of large rows, read once and kept by selection and row (entry and version). */
const keptValues = new WeakMap<
  ProjectionSource,
  Map<string, { rows: Map<string, unknown>; text: string | undefined }>
>();
const KEPT_ROWS = 1000;

function keptOf(source: ProjectionSource, signature: string) {
  let bySignature = keptValues.get(source);
  if (bySignature === undefined) keptValues.set(source, (bySignature = new Map()));
  let kept = bySignature.get(signature);
  if (kept === undefined) bySignature.set(signature, (kept = { rows: new Map(), text: undefined }));
  return kept;
}

/** Keeps the values of the large rows a statement read (`learned`: row key → values). */
function learn(source: ProjectionSource, signature: string, learned: string): void {
  const kept = keptOf(source, signature);
  const rows = JSON.parse(learned) as Record<string, unknown>;
  if (kept.rows.size >= KEPT_ROWS) kept.rows.clear();
  for (const [key, values] of Object.entries(rows)) kept.rows.set(key, values);
  kept.text = undefined;
}

interface Statement {
  readonly sql: string;
  readonly params: unknown[];
  readonly page: { offset: number; first: number };
  readonly cursorScope: string;
  /** The selection whose large rows' values `learned` brings. */
  readonly learning: string | undefined;
}

/** Values no DN is, standing for the nodes' DNs in a lookup's filter until replaced. */
const SENTINEL_PREFIX = "annal-compiled-dn-";
const SENTINEL_A = `${SENTINEL_PREFIX}a`;
const SENTINEL_B = `${SENTINEL_PREFIX}b`;

function buildStatement(
  plan: Plan,
  args: ExecutionArgs,
  context: GatewayContext,
  reads: CompiledReads,
): Statement | undefined {
  const { search } = plan;
  const { source } = reads;
  let fieldArgs: Record<string, unknown>;
  try {
    const variables = getVariableValues(
      args.schema,
      plan.operation.variableDefinitions ?? [],
      (args.variableValues ?? {}) as Record<string, unknown>,
    );
    if (variables.errors !== undefined) return undefined;
    fieldArgs = getArgumentValues(search.field, search.node, variables.coerced);
  } catch {
    return undefined;
  }
  const input = { args: fieldArgs, parent: undefined, value: undefined } as unknown as StepInput;
  const base = baseDN(search.spec, input);
  if (base === undefined) return undefined;
  let filter: FilterNode;
  let page: { offset: number; first: number };
  let cursorScope: string;
  try {
    filter = searchFilter(search.spec, input);
    cursorScope = `${search.owner}.${search.field.name}|${base}|${search.spec.scope}|${renderFilter(filter)}`;
    page = pageRequest(fieldArgs, cursorScope);
  } catch {
    return undefined; // the resolvers give the error
  }
  // Within what capture records, as the searches' reads decide it.
  for (const name of context.attributes) if (source.redacted.has(name)) return undefined;
  const binary = new Set(context.binaryAttributes.map((name) => baseName(name)));
  const stored = coveredFilter(source, normalizeDN(source.base), base, {
    attributes: context.attributes,
    filter,
  });
  if (stored === undefined) return undefined;
  const params: unknown[] = [];
  const bind = (value: unknown) => `$${params.push(value)}`;
  /** The jsonb of a row's values of `names`, kept ones from memory for large rows. */
  const values = (
    alias: string,
    fields: readonly NodeField[],
  ): { sql: string; signature?: string; kept?: string } | undefined => {
    const names = new Set<string>();
    for (const field of fields) {
      if (field.kind !== "leaf") continue;
      for (const name of field.names) {
        if (name === "dn") continue;
        if (binary.has(name.toLowerCase())) return undefined;
        names.add(name);
      }
    }
    if (names.size === 0) return { sql: `'{}'::jsonb` };
    const pairs = [...names].map((name) => {
      const key = bind(name);
      return `${key}::text, coalesce(r.operational -> ${key}::text, r.attributes -> ${key}::text, '[]'::jsonb)`;
    });
    const read = `(SELECT jsonb_build_object(${pairs.join(", ")})
       FROM (SELECT ${alias}.attributes #> '{}'::text[] AS attributes,
                    ${alias}.operational #> '{}'::text[] AS operational OFFSET 0) AS r)`;
    const signature = JSON.stringify([...names].sort());
    const kept = keptOf(source, signature);
    if (kept.rows.size === 0) return { sql: read, signature };
    kept.text ??= JSON.stringify(Object.fromEntries(kept.rows));
    const rowKey = `CASE WHEN ${alias}.type IS NOT NULL THEN ${alias}.entry_uuid::text || '/' || ${alias}.version END`;
    const known = `${bind(kept.text)}::jsonb`;
    return { sql: `coalesce(${known} -> ${rowKey}, ${read})`, signature, kept: known };
  };
  /** A leaf's JSON over the row's values `v` and DN `d`. */
  const leafSql = (leaf: Leaf, v: string, d: string): string => {
    const lists = leaf.names.map((name) =>
      name === "dn" ? `jsonb_build_array(${d})` : `(${v} -> ${bind(name)}::text)`,
    );
    if (!leaf.list) return `coalesce(${lists.map((list) => `${list} -> 0`).join(", ")})`;
    const cases = lists.map((list) => `WHEN jsonb_array_length(${list}) > 0 THEN ${list}`);
    return `CASE ${cases.join(" ")} ELSE '[]'::jsonb END`;
  };
  const objectSql = (
    fields: readonly NodeField[],
    v: string,
    d: string,
    lookup: (field: Lookup) => string,
  ): string =>
    `json_build_object(${fields
      .map((field) => {
        const key = `'${field.key}'`; // a GraphQL name: letters, digits, _
        switch (field.kind) {
          case "typename":
            return `${key}, '${field.name}'::text`;
          case "leaf":
            return `${key}, ${leafSql(field, v, d)}`;
          case "lookup":
            return `${key}, ${lookup(field)}`;
        }
      })
      .join(", ")})`;
  const required = (fields: readonly NodeField[], v: string, d: string): string[] =>
    fields.flatMap((field) =>
      field.kind === "leaf" && field.required && !field.list
        ? [`${leafSql(field, v, d)} IS NULL`]
        : [],
    );

  const nodeFields = search.nodeFields ?? [];
  const nodeValues = values("e", nodeFields);
  if (nodeValues === undefined) return undefined;
  const scope = scopeSql(search.spec.scope, normalizeDN(base), bind);
  const limit = bind(page.offset + page.first + 1);
  const order = (alias: string) => `ORDER BY ${alias}.created_position, ${alias}.entry_uuid`;
  const from = matchingEntries(scope, stored, params, (alias) => `${order(alias)} LIMIT ${limit}`);
  const wanted = search.nodeFields !== undefined;
  const common: string[] = [
    `page AS MATERIALIZED (
       SELECT e.entry_uuid, e.dn, e.created_position,
              row_number() OVER (${order("e")}) AS n
         FROM ${from}
        ${order("e")}
        LIMIT ${limit})`,
    `nodes AS MATERIALIZED (
       SELECT p.n, p.dn, ${wanted ? nodeValues.sql : "'{}'::jsonb"} AS v
         FROM page AS p JOIN ${ENTRIES} AS e ON e.entry_uuid = p.entry_uuid
        WHERE p.n > ${bind(page.offset)} AND p.n <= ${bind(page.offset + page.first)})`,
  ];
  // Each lookup: per node, the entries whose attribute holds its DN, in the directory's order.
  const lookups = new Map<Lookup, string>();
  const spans: string[] = [];
  let learned: string | undefined;
  let learning: string | undefined;
  let longDns = false;
  const foundCounts: string[] = [];
  for (const field of nodeFields) {
    if (field.kind !== "lookup") continue;
    const lookupBase = field.spec.base.kind === "attribute" ? undefined : field.spec.base.dn;
    if (lookupBase === undefined) return undefined;
    // As the loaders search: one lookup of every node's DN at once (an `or` of equalities,
    // whose values the filter's SQL reads from one list), then each found entry is handed to
    // the nodes whose DN its attribute holds.
    const matches = or(eq(field.attribute, SENTINEL_A), eq(field.attribute, SENTINEL_B));
    const lookupFilter =
      field.spec.filter === undefined ? matches : and(field.spec.filter, matches);
    const lookupStored = coveredFilter(source, normalizeDN(source.base), lookupBase, {
      attributes: [...context.attributes, field.attribute],
      filter: lookupFilter,
    });
    const attribute = source.schema.canonical(field.attribute);
    if (lookupStored === undefined || attribute === undefined) return undefined;
    const groupValues = values("e", field.fields);
    if (groupValues === undefined) return undefined;
    const name = `lookup${lookups.size}`;
    const lookupScope = scopeSql(field.spec.scope, normalizeDN(lookupBase), bind);
    const first = params.length;
    const lookupFrom = matchingEntries(lookupScope, lookupStored, params, (alias) => order(alias));
    // The list of the two stand-ins is the nodes' DNs: each parameter holding it is replaced.
    let sql = lookupFrom;
    let replaced = 0;
    for (let index = params.length - 1; index >= first; index--) {
      const param = params[index];
      const list =
        Array.isArray(param) &&
        param.length === 2 &&
        param[0] === SENTINEL_A &&
        param[1] === SENTINEL_B;
      if (!list) {
        // A stand-in bound alone or within another value: not a list the SQL can take.
        if (JSON.stringify(param ?? null).includes(SENTINEL_PREFIX)) return undefined;
        continue;
      }
      sql = sql.replace(
        new RegExp(`\\$${index + 1}(?![0-9])`, "g"),
        "ARRAY(SELECT n.dn FROM nodes AS n)",
      );
      params[index] = [];
      // Still typed, though no longer read.
      spans.push(`$${index + 1}::text[]`);
      replaced++;
    }
    if (replaced === 0) return undefined;
    const rowKey = `CASE WHEN e.type IS NOT NULL THEN e.entry_uuid::text || '/' || e.version END`;
    const key = `${bind(attribute)}::text`;
    common.push(`${name}_found AS MATERIALIZED (
       SELECT e.entry_uuid, e.type, e.a, e.dn, e.created_position, ${groupValues.sql} AS v,
              ${rowKey} AS row_key,
              pg_column_size(e.attributes) >= ${LARGE_STORED_BYTES} AS large
         FROM ${sql})`);
    // A typed entry holds the DN when a value of its attribute folds to it (a key holds the
    // whole fold of each DN: longer ones are not compiled); an untyped one, when its JSON does.
    common.push(`${name} AS MATERIALIZED (
       SELECT n.n, f.entry_uuid, f.dn, f.created_position, f.v, f.row_key, f.large
         FROM nodes AS n JOIN ${name}_found AS f
           ON f.type IS NOT NULL
          AND f.entry_uuid IN (SELECT x.entry_uuid FROM ${ENTRY_VALUES} AS x
                                WHERE x.type = f.type AND x.attribute = ${key}
                                  AND x.value_key = lower(n.dn))
       UNION ALL
       SELECT n.n, f.entry_uuid, f.dn, f.created_position, f.v, f.row_key, f.large
         FROM nodes AS n JOIN ${name}_found AS f
           ON f.type IS NULL
          AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(f.a -> ${key}) AS w(value)
                       WHERE lower(w.value) = lower(n.dn)))`);
    longDns = true;
    foundCounts.push(`(SELECT count(*) FROM ${name}_found)`);
    lookups.set(field, name);
    if (learned === undefined && groupValues.signature !== undefined) {
      // The large rows not yet kept: their values are kept for the next statements.
      const known =
        groupValues.kept === undefined ? "" : `AND NOT (${groupValues.kept} ? l.row_key)`;
      learned = `(SELECT jsonb_object_agg(l.row_key, l.v)::text
         FROM (SELECT DISTINCT ON (l.row_key) l.row_key, l.v FROM ${name} AS l
                WHERE l.large AND l.row_key IS NOT NULL ${known}) AS l)`;
      learning = groupValues.signature;
    }
  }
  const nodeJson = objectSql(nodeFields, "n.v", "n.dn", (field) => {
    const name = lookups.get(field)!;
    return `(SELECT coalesce(json_agg(${objectSql(field.fields, "l.v", "l.dn", () => "NULL")}
                                   ORDER BY l.created_position, l.entry_uuid), '[]'::json)
               FROM ${name} AS l WHERE l.n = n.n)`;
  });
  const missing = [
    ...required(nodeFields, "n.v", "n.dn").map(
      (test) => `NOT EXISTS (SELECT 1 FROM nodes AS n WHERE ${test})`,
    ),
    ...[...lookups].flatMap(([field, name]) =>
      required(field.fields, "l.v", "l.dn").map(
        (test) => `NOT EXISTS (SELECT 1 FROM ${name} AS l WHERE ${test})`,
      ),
    ),
  ];
  const counted = search.parts.some((part) => part.kind === "totalCount");
  const total = counted
    ? `(SELECT count(*) FROM ${matchingEntries(scope, stored, params, () => "")})`
    : "NULL::bigint";
  // What the loaders' search reads: every entry found for any node.
  const lookedUp = foundCounts;
  // A DN whose fold a key may not hold whole (a key equal to it would be a longer value's
  // beginning): the resolvers answer.
  if (longDns) {
    missing.push(
      `NOT EXISTS (SELECT 1 FROM nodes AS n WHERE length(lower(n.dn)) >= ${VALUE_KEY_LENGTH})`,
    );
  }
  const sql = `WITH ${common.join(",\n")}
    SELECT ${wanted ? `(SELECT json_agg(${nodeJson} ORDER BY n.n) FROM nodes AS n)::text` : "NULL::text"} AS nodes,
           (SELECT count(*) FROM nodes) AS node_count,
           (SELECT count(*) FROM page) > ${bind(page.offset + page.first)} AS has_next,
           (SELECT count(*) FROM page) AS read,
           ${lookedUp.length ? lookedUp.join(" + ") : "0"} AS looked_up,
           ${total} AS total,
           ${missing.length ? missing.join(" AND ") : "TRUE"} AS complete,
           ${learned ?? "NULL::text"} AS learned
           ${spans.map((span, index) => `, ${span} AS unused${index}`).join("")}`;
  return { sql, params, page, cursorScope, learning };
}
