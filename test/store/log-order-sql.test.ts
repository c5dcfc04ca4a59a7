import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import t from "tap";

/**
 * The log's order is written in one place, src/store/log-order.ts. Ordering by the text of
 * `transaction_id` ("1000" before "999") shipped twice, both times from SQL written by hand
 * in a reader; this test fails on any SQL outside that file that orders by, or selects the
 * text of, a transaction id, so the third reader to come uses the helper too.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const HELPER = "src/store/log-order.ts";
const SCANNED = ["src", "projections", "bench", "test/support"];

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((f) => f.isFile() && f.name.endsWith(".ts"))
    .map((f) => path.relative(ROOT, path.join(f.parentPath, f.name)));
}

/** The clauses after each `ORDER BY`, up to where such a clause ends. */
function orderClauses(text: string): string[] {
  return [...text.matchAll(/ORDER BY([\s\S]*?)(?=LIMIT|OFFSET|FOR |\)|`|;|$)/gi)].map((m) => m[1]!);
}

t.test("only the store's log-order helper orders by or selects a transaction id", async (t) => {
  const offenders: string[] = [];
  for (const file of SCANNED.flatMap(sources)) {
    if (file === HELPER) continue;
    const text = readFileSync(path.join(ROOT, file), "utf8");
    // The benchmarks' raw baselines may read by position alone (they measure PostgreSQL, not
    // the log); no reader may order by a transaction id by hand.
    const ordersByLog = file.startsWith("bench/")
      ? /transaction_id/
      : /transaction_id|\bposition\b/;
    for (const clause of orderClauses(text)) {
      if (ordersByLog.test(clause)) {
        offenders.push(`${file}: ORDER BY${clause.replace(/\s+/g, " ").trimEnd()}`);
      }
    }
    if (/transaction_id\s*::\s*text/i.test(text)) offenders.push(`${file}: transaction_id::text`);
  }
  t.same(offenders, [], "use logOrder, logPositionCompare and logPositionColumns");
});

t.test("the check finds the bug it guards against", async (t) => {
  const buggy = `SELECT transaction_id::text AS transaction_id, position FROM changes
    ORDER BY transaction_id ASC, position ASC LIMIT $1`;
  t.ok(orderClauses(buggy).some((c) => /transaction_id/.test(c)));
  t.notOk(
    orderClauses("SELECT 1 FROM t ORDER BY valid_from DESC LIMIT 1").some((c) =>
      /transaction_id|\bposition\b/.test(c),
    ),
  );
});
