import { randomBytes } from "node:crypto";
import t from "tap";
import { chainBatch, verifyChain } from "../../src/audit/index.ts";
import { captureOnce } from "../../src/capture/index.ts";
import type { Pool } from "../../src/db/index.ts";
import { LARGE_DATA_BYTES } from "../../src/store/index.ts";
import { Projector, waitForProjection, type ProjectorOptions } from "../../src/projector/index.ts";
import { allProjections, entriesProjection } from "../../projections/index.ts";
import { captureFixture, quietLog } from "../support/capture.ts";
import { eventually } from "../support/eventually.ts";
import { loopHoldsDuring } from "../support/loop-holds.ts";
import { compareWithReplay } from "../support/projection-replay.ts";

const PEOPLE = 40;

/**
 * The projector over every projection in batches of ten, bulk chunks of sixteen and the
 * readers' indexes built after twenty events: the first batch of an import sends its run to
 * the bulk build, which writes it in chunks and builds the indexes after.
 */
function startProjector(pool: Pool, log: ProjectorOptions["log"]): Promise<Projector> {
  return Projector.start({
    pool,
    projections: allProjections,
    log,
    batchSize: 10,
    firstSnapshots: { chunk: 16, indexesAfter: 20 },
  });
}
const long = (i: number) =>
  `A description longer than a value key, number ${i}: ${"x".repeat(230)}`;
const ldif = [
  ...Array.from(
    { length: PEOPLE },
    (_, i) => `dn: uid=p${i},ou=people,dc=example,dc=org
objectClass: inetOrgPerson
uid: p${i}
cn: Person ${i}
cn: P. ${i}
sn: Number${i}
mail: p${i}@example.org
${i % 3 === 0 ? `description: ${long(i)}\n` : ""}${i % 4 === 0 ? "title: Engineer\n" : ""}`,
  ),
  ...Array.from(
    { length: 3 },
    (_, g) => `dn: cn=team${g},ou=groups,dc=example,dc=org
objectClass: groupOfNames
cn: team${g}
${Array.from({ length: 5 }, (_, i) => `member: uid=p${g * 5 + i},ou=people,dc=example,dc=org`).join("\n")}
`,
  ),
].join("\n");

t.test(
  "a first start's import is built in bulk, equal to a replay, and applied onto as usual",
  async (t) => {
    const f = await captureFixture(t, { seedLdif: ldif });
    const { pool } = f.db;
    await captureOnce(f.context, "accesslog");
    const imported = Number(
      (await pool.query<{ n: string }>("SELECT count(*) AS n FROM events")).rows[0]!.n,
    );
    t.equal(imported, PEOPLE + 3 + 4, "the people, the groups, the base and its three ous");

    const bulk: { projection: string; events: number }[] = [];
    const log = {
      ...quietLog,
      info(fields: unknown, message?: string) {
        if (message === "first snapshots applied in bulk") {
          bulk.push(fields as { projection: string; events: number });
        }
      },
    };
    // Forty people and seven more entries: the bulk build writes them in three chunks.
    const projector = await startProjector(pool, log);
    t.teardown(() => projector.stop());
    const head = await f.store.head();
    for (const projection of allProjections) {
      await waitForProjection(pool, projection.name, head, 30_000);
    }
    t.same(
      bulk.map((b) => [b.projection, b.events]).sort(),
      allProjections.map((p) => [p.name, imported]).sort(),
      "every projection took the whole import in one bulk build",
    );
    for (const projection of allProjections) {
      const same = await compareWithReplay(pool, projection);
      t.same(same.differences, [], `${projection.name} equals its replay`);
    }
    // Built after the load's commit, beside the projection (test/projector/reader-indexes).
    await eventually(
      async () =>
        (
          await pool.query(
            `SELECT 1 FROM pg_index AS i
              WHERE i.indexrelid = to_regclass('projection_entries.entry_values_trigram')
                AND i.indisvalid`,
          )
        ).rowCount === 1,
      { what: "the readers' indexes built again after the load" },
    );

    const keyed = await pool.query(
      `SELECT 1 FROM pg_constraint
        WHERE conname = 'entry_values_pkey' AND contype = 'p'
          AND conrelid = 'projection_entries.entry_values'::regclass`,
    );
    t.equal(keyed.rowCount, 1, "the value index is keyed again after the load");

    // Changes after the bulk build apply onto it as onto tables built batch by batch.
    await f.directory.modify("uid=p1,ou=people,dc=example,dc=org", [
      { operation: "replace", attribute: "title", values: "Manager" },
    ]);
    await f.directory.modifyDN("uid=p2,ou=people,dc=example,dc=org", "uid=p2b");
    await f.directory.delete("uid=p3,ou=people,dc=example,dc=org");
    await f.directory.add("uid=new,ou=people,dc=example,dc=org", {
      objectClass: "inetOrgPerson",
      uid: "new",
      cn: "New",
      sn: "Person",
    });
    await captureOnce(f.context, "accesslog");
    const after = await f.store.head();
    for (const projection of allProjections) {
      await waitForProjection(pool, projection.name, after, 30_000);
      const same = await compareWithReplay(pool, projection);
      t.same(same.differences, [], `${projection.name} still equals its replay`);
    }
    const titles = await pool.query<{ title: string[] }>(
      `SELECT attributes->'title' AS title FROM projection_entries.entries
        WHERE dn = 'uid=p1,ou=people,dc=example,dc=org'`,
    );
    t.same(titles.rows[0]?.title, ["Manager"]);

    // The hash chain runs over the import as over any append.
    while ((await chainBatch(pool, 20)) > 0);
    t.equal((await verifyChain(pool)).checked, imported + 4, "`annal log verify` passes");
  },
);

t.test("a run that is not all first snapshots is applied batch by batch", async (t) => {
  const f = await captureFixture(t, { seedLdif: ldif });
  const { pool } = f.db;
  // A second import snapshots every entry again (version 2): nothing there opens a stream.
  await captureOnce(f.context, "accesslog");
  const bulk: unknown[] = [];
  const log = {
    ...quietLog,
    info(fields: unknown, message?: string) {
      if (message === "first snapshots applied in bulk") bulk.push(fields);
    },
  };
  const projector = await startProjector(pool, log);
  t.teardown(() => projector.stop());
  const head = await f.store.head();
  for (const { name } of allProjections) await waitForProjection(pool, name, head, 30_000);
  t.equal(bulk.length, allProjections.length, "the import was built in bulk");
  await projector.stop();
  const { importEntries } = await import("../../src/capture/index.ts");
  await importEntries(f.context, { reason: "periodic" });
  bulk.length = 0;
  const again = await startProjector(pool, log);
  t.teardown(() => again.stop());
  await waitForProjection(pool, "entries", await f.store.head(), 30_000);
  t.same(bulk, [], "later snapshots go through apply");
  const same = await compareWithReplay(pool, allProjections[0]!);
  t.same(same.differences, []);
});

/**
 * Values whose fold JavaScript's `toLowerCase` and PostgreSQL's `lower()` may disagree on:
 * the bulk build folds only ASCII values in Node and must leave these to the database.
 */
const SPECIAL = [
  "İstanbul",
  "Straße",
  "ΟΔΟΣ",
  "ΣΊΣΥΦΟΣ Ο ΚΟΡΊΝΘΙΟΣ",
  "Ǆemal",
  `Ünïcödé ${"Ä".repeat(210)}`,
  "C:\\Temp\tTab",
];
const base64 = (value: string) => Buffer.from(value, "utf8").toString("base64");
const specialLdif = Array.from(
  { length: SPECIAL.length * 3 },
  (_, i) => `dn: uid=s${i},ou=people,dc=example,dc=org
objectClass: inetOrgPerson
uid: s${i}
cn:: ${base64(SPECIAL[i % SPECIAL.length]!)}
cn: S${i}
sn:: ${base64(SPECIAL[(i + 1) % SPECIAL.length]!)}
description:: ${base64(`${SPECIAL[(i + 2) % SPECIAL.length]!} ${"x".repeat(i * 20)}`)}
`,
).join("\n");

t.test(
  "a first start's bulk build equals what the live path builds, values the case fold treats specially included",
  async (t) => {
    // A group large as stored (random members do not compress): its snapshot stays on the
    // SQL path of the bulk build (LARGE_DATA_BYTES).
    const large = `dn: cn=large,ou=groups,dc=example,dc=org
objectClass: groupOfNames
cn: large
${Array.from({ length: 5_000 }, () => `member: uid=${randomBytes(24).toString("hex")},ou=people,dc=example,dc=org`).join("\n")}
`;
    const f = await captureFixture(t, { seedLdif: `${ldif}\n${specialLdif}\n${large}` });
    const { pool } = f.db;
    // The test has teeth where the two folds differ under the test database's collation.
    const folds = await pool.query<{ value: string; folded: string }>(
      "SELECT v AS value, lower(v) AS folded FROM unnest($1::text[]) AS v",
      [SPECIAL],
    );
    const differ = folds.rows.filter((row) => row.folded !== row.value.toLowerCase());
    t.ok(differ.length > 0, "JavaScript's toLowerCase and lower() differ on some of the values");
    t.comment(`they differ on: ${differ.map((row) => row.value.slice(0, 20)).join(", ")}`);

    await captureOnce(f.context, "accesslog");
    const stored = await pool.query<{ bytes: number }>(
      "SELECT max(pg_column_size(data)) AS bytes FROM events WHERE type = 'EntrySnapshot'",
    );
    t.ok(stored.rows[0]!.bytes > LARGE_DATA_BYTES, "one snapshot is large as stored");
    // The same projection without its bulk build or replay plan: every snapshot through
    // `apply`, batch by batch, as live changes are applied.
    const live = {
      ...entriesProjection,
      name: "entries_live",
      applyFirstSnapshots: undefined,
      replay: undefined,
    };
    const bulk: string[] = [];
    const projector = await Projector.start({
      pool,
      projections: [entriesProjection, live],
      log: {
        ...quietLog,
        info(fields: unknown, message?: string) {
          if (message === "first snapshots applied in bulk") {
            bulk.push((fields as { projection: string }).projection);
          }
        },
      },
      batchSize: 10,
      firstSnapshots: { chunk: 16, indexesAfter: 20 },
    });
    t.teardown(() => projector.stop());
    const head = await f.store.head();
    await waitForProjection(pool, "entries", head, 30_000);
    await waitForProjection(pool, "entries_live", head, 30_000);
    t.same(bulk, ["entries"], "entries was built in bulk, its twin batch by batch");

    for (const table of ["entries", "entry_values", "entry_value_counts"]) {
      const { rows } = await pool.query<{ rows: number; only_bulk: unknown; only_live: unknown }>(
        `SELECT (SELECT count(*)::int FROM projection_entries.${table}) AS rows,
                (SELECT jsonb_agg(r) FROM (SELECT to_jsonb(x) AS r FROM projection_entries.${table} x
                   EXCEPT ALL SELECT to_jsonb(y) FROM projection_entries_live.${table} y LIMIT 3) d) AS only_bulk,
                (SELECT jsonb_agg(r) FROM (SELECT to_jsonb(y) AS r FROM projection_entries_live.${table} y
                   EXCEPT ALL SELECT to_jsonb(x) FROM projection_entries.${table} x LIMIT 3) d) AS only_live`,
      );
      t.ok(rows[0]!.rows > 0, `${table} holds rows`);
      t.same([rows[0]!.only_bulk, rows[0]!.only_live], [null, null], `${table} is the same`);
    }
    const special = await pool.query<{ value_key: string }>(
      `SELECT value_key FROM projection_entries.entry_values
        WHERE attribute = 'cn' AND value_key = lower($1::text)`,
      ["ΟΔΟΣ"],
    );
    t.ok(special.rowCount! > 0, "a value folded by lower() is found by the fold a filter makes");
  },
);

t.test(
  "the bulk build works out its pages of entries in slices: the event loop is not held for a page",
  async (t) => {
    // A page is a thousand snapshots; people with a dozen values each, as a directory's are.
    const many = Array.from(
      { length: 2_000 },
      (_, i) => `dn: uid=m${i},ou=people,dc=example,dc=org
objectClass: inetOrgPerson
uid: m${i}
cn: Member Number ${i}
cn: M. ${i}
sn: Number${i}
givenName: Member
mail: m${i}@example.org
title: Engineer ${i % 7}
description: ${long(i)}
telephoneNumber: +1 555 ${String(i).padStart(4, "0")}
ou: Team ${i % 13}
`,
    ).join("\n");
    const f = await captureFixture(t, { seedLdif: many });
    const { pool } = f.db;
    await captureOnce(f.context, "accesslog");
    const head = await f.store.head();
    const { holds } = await loopHoldsDuring(async () => {
      const projector = await Projector.start({
        pool,
        projections: [entriesProjection],
        log: quietLog,
        firstSnapshots: { indexesAfter: 1_000_000 },
      });
      t.teardown(() => projector.stop());
      await waitForProjection(pool, "entries", head, 60_000);
    });
    t.comment(`longest hold ${holds.longest.toFixed(1)} ms of CPU; over 20 ms: ${holds.over(20)}`);
    t.ok(holds.longest < 25, "no hold of 25 ms of CPU or more");
  },
);
