import type { QueryConfig } from "pg";
import type { Pool } from "../../src/db/index.ts";
import type { DirectoryClient, DirectoryEntry } from "../../src/directory/index.ts";
import { eventually } from "./eventually.ts";

/**
 * A node of a plan as `EXPLAIN (ANALYZE, FORMAT JSON)` gives it: the plan tests read how many
 * rows each step handled, to show that a page stops with the page.
 */
export interface PlanNode {
  readonly "Node Type": string;
  readonly "Actual Rows"?: number;
  readonly "Actual Loops"?: number;
  readonly "Rows Removed by Filter"?: number;
  readonly "Rows Removed by Index Recheck"?: number;
  readonly "Index Name"?: string;
  readonly "Relation Name"?: string;
  readonly Plans?: readonly PlanNode[];
  readonly [field: string]: unknown;
}

/** Every node of a plan, flattened, the plan's own first. */
export function planNodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(planNodes)];
}

/**
 * Rows a node of an analysed plan handled over all its loops: those it returned and those its
 * filter or an index recheck dropped.
 */
export function rowsHandled(node: PlanNode): number {
  return (
    ((node["Actual Rows"] ?? 0) +
      (node["Rows Removed by Filter"] ?? 0) +
      (node["Rows Removed by Index Recheck"] ?? 0)) *
    (node["Actual Loops"] ?? 1)
  );
}

/** A statement as a pool was asked to run it. */
export interface NotedStatement {
  readonly sql: string;
  readonly params: unknown[];
}

/**
 * `pool`, noting in `statements` every statement it runs, with its parameters (given as text
 * and values, or as one query config).
 */
export function notingPool(pool: Pool, statements: NotedStatement[]): Pool {
  return new Proxy(pool, {
    get(target, property, receiver) {
      if (property === "query") {
        return (query: string | QueryConfig, params: unknown[] = []) => {
          if (typeof query === "string") {
            statements.push({ sql: query, params });
            return target.query(query, params);
          }
          statements.push({ sql: query.text, params: query.values ?? [] });
          return target.query(query);
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function" ? (value as () => unknown).bind(target) : value;
    },
  });
}

/** `statement` run again under `EXPLAIN (ANALYZE, FORMAT JSON)`: its plan's root. */
export async function explainAnalyzed(pool: Pool, statement: NotedStatement): Promise<PlanNode> {
  const explained = await pool.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
    `EXPLAIN (ANALYZE, FORMAT JSON) ${statement.sql}`,
    statement.params,
  );
  return explained.rows[0]!["QUERY PLAN"][0].Plan;
}

/**
 * Searches through a gateway's reads (`directory`, built on `notingPool(pool, statements)`),
 * each answered with the entries it gave and the flattened plan of the last statement it ran:
 * the page's own query, run again under EXPLAIN ANALYZE.
 */
export function analysedSearches(
  pool: Pool,
  directory: Pick<DirectoryClient, "search">,
  statements: NotedStatement[],
): (
  dn: string,
  options: Parameters<DirectoryClient["search"]>[1],
) => Promise<{ entries: DirectoryEntry[]; plan: PlanNode[] }> {
  return async (dn, options) => {
    statements.length = 0;
    const entries: DirectoryEntry[] = [];
    for await (const page of directory.search(dn, options)) entries.push(...page);
    return { entries, plan: planNodes(await explainAnalyzed(pool, statements.at(-1)!)) };
  };
}

/** The most rows one scan read, and the most rows one Sort took in, in a plan. */
export function busiestSteps(plan: PlanNode): { scanned: number; sorted: number } {
  let scanned = 0;
  let sorted = 0;
  for (const node of planNodes(plan)) {
    if (/Scan/.test(node["Node Type"])) scanned = Math.max(scanned, rowsHandled(node));
    if (node["Node Type"] === "Sort" || node["Node Type"] === "Incremental Sort") {
      for (const child of node.Plans ?? []) sorted = Math.max(sorted, rowsHandled(child));
    }
  }
  return { scanned, sorted };
}

/**
 * `tables` vacuumed and analysed until every page is marked all-visible, as autovacuum leaves a
 * table at rest: only then are index-only scans costed as such. A transaction still open in
 * the database (a projector's batch) keeps VACUUM from marking the pages its snapshot predates,
 * and the planner then chose a bitmap scan, which reads every match, for a bounded count.
 */
export async function vacuumedAtRest(pool: Pool, tables: readonly string[]): Promise<void> {
  await eventually(
    async () => {
      await pool.query(`VACUUM ANALYZE ${tables.join(", ")}`);
      const unmarked = await pool.query(
        `SELECT 1 FROM pg_class
          WHERE oid = ANY($1::regclass[]) AND relallvisible < relpages`,
        [tables],
      );
      return unmarked.rowCount === 0;
    },
    { what: `every page of ${tables.join(", ")} all-visible`, interval: 200 },
  );
}
