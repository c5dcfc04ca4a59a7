import { mkdtemp, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { extractToFolder, TABLE_NAMES } from "../../src/extract/index.ts";
import { addPeople, GROUPS, PEOPLE, restHarness, TEST_SCHEMA } from "../rest/fixtures/harness.ts";
import { duckdb, literal } from "../support/duckdb.ts";

/**
 * `GET /api/extracts/{table}.parquet`: each table whole as one Parquet file, which DuckDB reads
 * with the rows `annal extract` wrote into a folder; refused without the export access function
 * and for a table that is not one.
 */
t.setTimeout(300_000);

const harness = await restHarness(t);
const { history, pool, get } = harness;
const db = await duckdb(t);
const ids = await addPeople(history, new Date("2026-01-01T09:00:00Z"));
const group = await history.add(
  {
    dn: `cn=staff,${GROUPS}`,
    type: "group",
    attributes: { objectClass: ["groupOfNames"], cn: ["staff"], member: [`uid=alice,${PEOPLE}`] },
  },
  { at: new Date("2026-01-01T09:00:00Z") },
);
await history.modify(ids.bob!, { title: ["Chief"] }, { at: new Date("2026-02-01T09:00:00Z") });
await history.modify(
  group,
  { member: [`uid=bob,${PEOPLE}`] },
  { at: new Date("2026-03-01T09:00:00Z") },
);
await history.settled();

const dir = await mkdtemp(path.join(tmpdir(), "annal-extract-route-"));
await extractToFolder(pool, { dir, schema: TEST_SCHEMA });

t.test("every table downloads as the Parquet the folder holds", async (t) => {
  for (const table of TABLE_NAMES) {
    const response = await get(`/api/extracts/${table}.parquet`);
    t.equal(response.statusCode, 200, `${table}: ${response.statusCode}`);
    t.equal(response.headers["content-type"], "application/vnd.apache.parquet");
    t.match(response.headers["content-disposition"], `${table}.parquet`);
    const file = path.join(dir, `${table}-download.parquet`);
    await writeFile(file, response.rawPayload);
    const downloaded = await db.rows(`SELECT * FROM read_parquet(${literal(file)}) ORDER BY ALL`);
    const files = await readdir(path.join(dir, table));
    t.ok(files.length > 0, `${table}: a file in the folder, rows or not`);
    const folder =
      files.length === 0
        ? []
        : await db.rows(
            `SELECT * FROM read_parquet(${literal(path.join(dir, table, "*.parquet"))}, union_by_name = true) ORDER BY ALL`,
          );
    t.same(downloaded, folder, `${table}: the same ${folder.length} rows`);
  }
});

t.test("an extract needs the export access function and a known table", async (t) => {
  const reader = await harness.token(["read"]);
  const refused = await get("/api/extracts/events.parquet", { authorization: `Bearer ${reader}` });
  t.equal(refused.statusCode, 403);
  const anonymous = await harness.app.inject({
    method: "GET",
    url: "/api/extracts/events.parquet",
  });
  t.equal(anonymous.statusCode, 401);
  for (const name of ["entries.parquet", "events.csv", "events"]) {
    const unknown = await get(`/api/extracts/${name}`);
    t.equal(unknown.statusCode, 404, name);
    t.equal(unknown.json().code, "ANNAL_EXTRACT_TABLE_UNKNOWN");
  }
});
