import t from "tap";
import type { AnnalConfig } from "../../src/config/index.ts";
import { CHECKPOINT_TTL_MS, ReadState } from "../../src/graphql/gateway/read-state.ts";
import { eventually } from "../support/eventually.ts";
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

    // Once caught up, a request's state costs at most one round trip, the checkpoint, and
    // none when another request read it less than CHECKPOINT_TTL_MS ago.
    const statements: string[] = [];
    const noting = {
      query: (sql: string, params?: unknown[]) => {
        statements.push(sql);
        return db.pool.query(sql, params);
      },
    } as unknown as typeof db.pool;
    await ReadState.start({ config: CONFIG, projection: { db: noting } });
    statements.length = 0;
    const read = Date.now();
    const next = await ReadState.start({ config: CONFIG, projection: { db: noting } });
    t.equal(next.source, "projection");
    if (Date.now() - read < CHECKPOINT_TTL_MS) {
      t.equal(statements.length, 0, `none within the bound: ${statements.join("; ")}`);
    }
    await eventually(() => Date.now() - read > CHECKPOINT_TTL_MS, { what: "the bound passed" });
    statements.length = 0;
    const later = await ReadState.start({ config: CONFIG, projection: { db: noting } });
    t.equal(later.source, "projection");
    t.equal(statements.length, 1, `one statement past it: ${statements.join("; ")}`);
  },
);

/**
 * The checkpoint a request read stands for the requests of the next `CHECKPOINT_TTL_MS`, but
 * a mutation's wait raises it at once: a request after a write reports at least the write's
 * position, as a request after a write reads it (read-your-writes).
 */
t.test("a write's position raises the checkpoint the next requests report", async (t) => {
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
  await store.appendToStream("test-first", [{ type: "TestNoted", data: { n: 1 } }]);
  const first = await readHead(db.pool);
  await waitForProjection(db.pool, "entries", first, 30_000);
  // The checkpoint kept for longer than the test takes: only the write's wait raises it.
  const pool = { query: db.pool.query.bind(db.pool) } as unknown as typeof db.pool;
  const options = { config: CONFIG, projection: { db: pool }, checkpointTtlMs: 600_000 };
  const state = await ReadState.start(options);
  t.same(state.extensions().extensions?.logPosition, first);

  // A mutation's write, which the projection has applied when its wait returns.
  await store.appendToStream("test-write", [{ type: "TestNoted", data: { n: 2 } }]);
  const written = await readHead(db.pool);
  await state.written(async () => {
    await waitForProjection(db.pool, "entries", written, 30_000);
    return written;
  });
  t.same(state.extensions().extensions?.logPosition, written, "the request reports its write");
  const after = await ReadState.start(options);
  t.same(after.extensions().extensions?.logPosition, written, "the next request reports it too");
});

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
