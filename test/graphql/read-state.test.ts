import t from "tap";
import type { AnnalConfig } from "../../src/config/index.ts";
import { ReadState } from "../../src/graphql/gateway/read-state.ts";
import { Projector, waitForProjection } from "../../src/projector/index.ts";
import { EventStore, readHead } from "../../src/store/index.ts";
import { allProjections } from "../../projections/index.ts";
import { quietLog } from "../support/capture.ts";
import { testDatabase } from "../support/postgres.ts";

const CONFIG = { graphql: { reads: "projection" } } as AnnalConfig;

/**
 * The gateway reads the projection once the entries projection has applied the log up to its
 * head, compared in log order: a transaction that took its id first and commits last puts a
 * higher position before a lower one, so "the highest position" is not the head, and a check
 * by positions alone would hold the gateway on the directory for good.
 */
t.test(
  "the projection is caught up when its checkpoint is the log's head in log order",
  async (t) => {
    const db = await testDatabase(t);
    const store = await EventStore.open(db.pool);
    const projector = await Projector.start({
      pool: db.pool,
      projections: allProjections,
      log: quietLog,
    });
    t.teardown(() => projector.stop());
    await db.pool.query(
      "INSERT INTO capture_checkpoints (source, position) VALUES ('accesslog', '0')",
    );

    // The earlier transaction takes its id, the later one appends and commits, then the earlier
    // appends (a higher position, an earlier place in the log) and commits.
    const earlier = await db.pool.connect();
    t.teardown(() => earlier.release());
    await earlier.query("BEGIN");
    await earlier.query("SELECT pg_current_xact_id()");
    await store.appendToStream("test-later", [{ type: "TestNoted", data: { n: 1 } }]);
    await store.appendToStream("test-earlier", [{ type: "TestNoted", data: { n: 2 } }], {
      tx: earlier,
    });
    await earlier.query("COMMIT");

    const { rows } = await db.pool.query<{ position: string }>(
      "SELECT max(position)::text AS position FROM events",
    );
    const head = await readHead(db.pool);
    t.ok(Number(rows[0]!.position) > head.position, "the highest position is not the log's head");
    await waitForProjection(db.pool, "entries", head, 30_000);

    const state = await ReadState.start({ config: CONFIG, projection: { db: db.pool } });
    t.equal(state.source, "projection", "the gateway reads the projection");
    t.same(state.extensions().extensions?.logPosition, head);

    // Once caught up, a request's state costs one round trip: the checkpoint, read at once.
    const statements: string[] = [];
    const noting = {
      query: (sql: string, params?: unknown[]) => {
        statements.push(sql);
        return db.pool.query(sql, params);
      },
    } as unknown as typeof db.pool;
    await ReadState.start({ config: CONFIG, projection: { db: noting } });
    statements.length = 0;
    const next = await ReadState.start({ config: CONFIG, projection: { db: noting } });
    t.equal(next.source, "projection");
    t.equal(statements.length, 1, `one statement a request: ${statements.join("; ")}`);
  },
);

/**
 * On a log that never rests the projection is always a little behind the head: the gateway
 * turns to it once it has applied the head as it was when the import was first seen recorded.
 */
t.test("a projection behind a busy log's head still serves once it holds the import", async (t) => {
  const db = await testDatabase(t);
  const store = await EventStore.open(db.pool);
  await db.pool.query(
    "INSERT INTO capture_checkpoints (source, position) VALUES ('accesslog', '0')",
  );
  await store.appendToStream("test-import", [{ type: "TestNoted", data: { n: 1 } }]);
  const first = await ReadState.start({ config: CONFIG, projection: { db: db.pool } });
  t.equal(first.source, "directory", "no projection yet: the directory");

  const projector = await Projector.start({
    pool: db.pool,
    projections: allProjections,
    log: quietLog,
  });
  await waitForProjection(db.pool, "entries", await readHead(db.pool), 30_000);
  await projector.stop();
  // A write after the import, not yet applied: the head moves past the projection.
  await store.appendToStream("test-later", [{ type: "TestNoted", data: { n: 2 } }]);

  const state = await ReadState.start({ config: CONFIG, projection: { db: db.pool } });
  t.equal(state.source, "projection", "the projection holds the import: it serves");
});

t.test("without the projection's schema, a request reads the directory", async (t) => {
  const db = await testDatabase(t);
  const state = await ReadState.start({ config: CONFIG, projection: { db: db.pool } });
  t.equal(state.source, "directory", "no schema, no checkpoint: the directory");
});
