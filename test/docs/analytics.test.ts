import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { extractToFolder } from "../../src/extract/index.ts";
import { addPeople, GROUPS, PEOPLE, restHarness, TEST_SCHEMA } from "../rest/fixtures/harness.ts";
import { duckdb } from "../support/duckdb.ts";

/**
 * docs/analytics.md's DuckDB queries, run as printed (the folder `extracts/` replaced by the
 * test's own) against an extract of a small history, and their answers checked.
 */
t.setTimeout(300_000);

const ROOT = path.resolve(import.meta.dirname, "../..");
const DOC = await readFile(path.join(ROOT, "docs/analytics.md"), "utf8");
const QUERIES = [...DOC.matchAll(/```sql\n([\s\S]*?)```/g)].map((match) => match[1]!);

const at = (text: string) => ({ at: new Date(text) });
const person = (uid: string) => `uid=${uid},${PEOPLE}`;

const { history, pool } = await restHarness(t);
const ids = await addPeople(history, new Date("2026-01-01T09:00:00Z"));
const staff = await history.add(
  {
    dn: `cn=staff,${GROUPS}`,
    type: "group",
    attributes: {
      objectClass: ["groupOfNames"],
      cn: ["staff"],
      member: [person("alice"), person("bob")],
    },
  },
  at("2026-01-05T09:00:00Z"),
);
await history.modify(ids.alice!, { title: ["Director"] }, at("2026-02-01T09:00:00Z"));
await history.modify(staff, (a) => ({ ...a, member: [...a.member!, person("carol")] }), {
  ...at("2026-03-01T09:00:00Z"),
  actor: person("alice"),
});
await history.modify(ids.alice!, { title: ["CEO"] }, at("2026-04-01T09:00:00Z"));
await history.modify(
  staff,
  (a) => ({ ...a, member: a.member!.filter((m) => m !== person("bob")) }),
  {
    ...at("2026-05-01T09:00:00Z"),
    actor: person("alice"),
  },
);
await history.settled();
const dir = await mkdtemp(path.join(tmpdir(), "annal-analytics-"));
await extractToFolder(pool, { dir, schema: TEST_SCHEMA });
const db = await duckdb(t);

const run = (index: number) =>
  db.rows(QUERIES[index]!.replaceAll("'extracts/", `'${dir}/`).replace(/;\s*$/, ""));

t.test("the guide's queries answer what the history says", async (t) => {
  t.equal(QUERIES.length, 5, "five queries");
  t.same(await run(0), [{ people: "5" }], "the count at a moment");
  t.same(
    (await run(1)).map((row) => row.title),
    [["Engineer"], ["Director"], ["CEO"]],
    "alice's versions",
  );
  t.same(
    (await run(2)).map((row) => row.member_dn),
    [person("alice"), person("bob"), person("carol")],
    "staff's members in the first quarter",
  );
  t.same(
    (await run(3)).map((row) => [row.change_type, row.actor_title]),
    [
      ["add", null],
      ["modify", ["Director"]],
      ["modify", ["CEO"]],
    ],
    "each change with its author's title then",
  );
  t.same(
    (await run(4)).map((row) => [row.member_dn, row.title]),
    [
      [person("alice"), ["Director"]],
      [person("bob"), ["Manager"]],
      [person("carol"), ["Engineer"]],
    ],
    "the members at the quarter's end, with their titles then",
  );
});
