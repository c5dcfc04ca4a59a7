import { mkdtemp, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { readManifest } from "../../src/extract/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { configDir, runAnnal } from "../cli/support.ts";
import { addPeople, PEOPLE } from "../rest/fixtures/harness.ts";
import { duckdb, literal } from "../support/duckdb.ts";
import { EntryHistory } from "../support/entries.ts";
import { testDatabase } from "../support/postgres.ts";

/**
 * `annal extract` as an operator runs it: its output, its refusals, and what an erasure does
 * to the files already written (the next run writes the folder again; no file keeps the
 * erased values).
 */
t.setTimeout(300_000);

const day = (n: number) => new Date(Date.UTC(2026, 10, n, 9));

const { url, pool } = await testDatabase(t);
const store = await EventStore.open(pool);
const history = await EntryHistory.start(t, pool, store);
const ids = await addPeople(history, day(1));
await history.modify(ids.bob!, { title: ["Manager", "Treasurer"] }, { at: day(2) });
await history.delete(ids.bob!, { at: day(3) });
await history.settled();
const env = { env: { DATABASE_URL: url } };
const { file: config } = await configDir(t, "");
const db = await duckdb(t);

/** The files under `dir` whose rows hold `text` anywhere, as DuckDB reads them. */
async function filesHolding(dir: string, text: string): Promise<string[]> {
  const found: string[] = [];
  for (const table of await readdir(dir, { withFileTypes: true })) {
    if (!table.isDirectory()) continue;
    for (const file of await readdir(path.join(dir, table.name))) {
      const rows = await db.rows(
        `SELECT count(*)::INTEGER AS n FROM read_parquet(${literal(path.join(dir, table.name, file))}) AS r
          WHERE r::VARCHAR LIKE ${literal(`%${text}%`)}`,
      );
      if ((rows[0]!.n as number) > 0) found.push(`${table.name}/${file}`);
    }
  }
  return found.sort();
}

t.test("annal extract writes the folder and says what each table got", async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), "annal-extract-cli-"));
  const run = await runAnnal(["extract", dir, "--config", config], env);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, /^events: \d+ rows in 1 file, up to log position \d+\/\d+$/m);
  t.match(run.stdout, /^entry_versions: 6 rows in 2 files, up to log position \d+\/\d+$/m);
  t.match(run.stdout, /^run 1 into .*: 0 files replaced$/m);
  const again = await runAnnal(["extract", dir, "--config", config], env);
  t.equal(again.code, 0, again.stderr);
  t.match(again.stdout, /^entry_versions: 0 rows in 0 files/m);
});

t.test("after an erasure, the next run writes every file again without the values", async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), "annal-extract-cli-"));
  const first = await runAnnal(["extract", dir, "--config", config], env);
  t.equal(first.code, 0, first.stderr);
  const before = await filesHolding(dir, "Treasurer");
  t.ok(
    before.some((file) => file.startsWith("entry_versions/")),
    `found in ${before}`,
  );
  t.ok(before.some((file) => file.startsWith("events/")));
  t.ok(before.some((file) => file.startsWith("changes/")));

  const erase = await runAnnal(
    ["erase", `uid=bob,${PEOPLE}`, "--reason", "order 2026-118", "--config", config],
    env,
  );
  t.equal(erase.code, 0, erase.stderr);
  const second = await runAnnal(["extract", dir, "--config", config], env);
  t.equal(second.code, 0, second.stderr);
  t.match(second.stdout, /^run 2 wrote everything again: an erasure was recorded since$/m);
  t.same(await filesHolding(dir, "Treasurer"), [], "no file holds the erased values");
  t.same(await filesHolding(dir, "bob@example.org"), []);
  const manifest = await readManifest(dir);
  const listed = Object.values(manifest!.tables).flatMap((table) => table.files);
  const present: string[] = [];
  for (const table of Object.keys(manifest!.tables)) {
    for (const file of await readdir(path.join(dir, table))) present.push(`${table}/${file}`);
  }
  t.same(present.sort(), [...listed].sort(), "the folder holds exactly the files listed");
  t.ok(
    listed.every((file) => file.includes("-r000002-")),
    "every file is run 2's",
  );
  t.equal(manifest!.runs.at(-1)!.rewrite, "an erasure was recorded since");
});

t.test("annal extract refuses what it cannot do, with a code", async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), "annal-extract-cli-"));
  const tables = await runAnnal(
    ["extract", dir, "--tables", "events,people", "--config", config],
    env,
  );
  t.equal(tables.code, 1);
  t.match(tables.stderr, /^annal: ANNAL_USAGE: --tables: no table people; the tables are events, /);
  const rows = await runAnnal(["extract", dir, "--rows-per-file", "0", "--config", config], env);
  t.equal(rows.code, 1);
  t.match(rows.stderr, /^annal: ANNAL_USAGE: --rows-per-file: "0" is not a whole number/);

  await writeFile(path.join(dir, "annal-extract.lock"), "1\n");
  const locked = await runAnnal(["extract", dir, "--config", config], env);
  t.equal(locked.code, 1);
  t.match(locked.stderr, /^annal: ANNAL_EXTRACT_IN_PROGRESS: .*\nannal: hint: wait for it/);

  const other = await mkdtemp(path.join(tmpdir(), "annal-extract-cli-"));
  t.equal((await runAnnal(["extract", other, "--config", config], env)).code, 0);
  const elsewhere = await testDatabase(t);
  const foreign = await runAnnal(["extract", other, "--config", config], {
    env: { DATABASE_URL: elsewhere.url },
  });
  t.equal(foreign.code, 1);
  t.match(
    foreign.stderr,
    /^annal: ANNAL_EXTRACT_FOLDER_INVALID: .* was written from another database/,
  );
});

t.test(
  "without an answer from the directory, attributes are lists of strings, and it says so",
  async (t) => {
    const { file } = await configDir(
      t,
      `[directory]
url = "ldap://127.0.0.1:1"
bindDN = "cn=admin,dc=example,dc=org"
password = "\${LDAP_PASSWORD:-x}"
base = "dc=example,dc=org"

[[directory.types]]
name = "user"
base = "${PEOPLE}"
filter = "(objectClass=inetOrgPerson)"
`,
    );
    const dir = await mkdtemp(path.join(tmpdir(), "annal-extract-cli-"));
    const run = await runAnnal(
      ["extract", dir, "--tables", "entry_versions", "--config", file],
      env,
    );
    t.equal(run.code, 0, run.stderr);
    t.match(
      run.stderr,
      "annal: the directory at ldap://127.0.0.1:1 did not answer: attributes are extracted as lists of strings",
    );
    const columns = Object.fromEntries(
      (
        await db.rows(
          `DESCRIBE SELECT * FROM read_parquet(${literal(path.join(dir, "entry_versions", "*.parquet"))}, union_by_name = true)`,
        )
      ).map((row) => [row.column_name, row.column_type]),
    );
    t.match(columns, {
      uidNumber: "VARCHAR[]",
      title: "VARCHAR[]",
      valid_from: "TIMESTAMP WITH TIME ZONE",
    });
  },
);
