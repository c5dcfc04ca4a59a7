import t from "tap";
import { importEntries, type CaptureContext } from "../../src/capture/index.ts";
import { entryStream } from "../../src/events/index.ts";
import type { Pool } from "../../src/db/index.ts";
import { captureFixture, peopleLdif } from "../support/capture.ts";
import { eventually } from "../support/eventually.ts";

const PEOPLE = 30;
const PAGE = 4;
const ldif = peopleLdif(PEOPLE);

/** Every entry's stream, in the order the directory pages them. */
async function streamsInPageOrder(context: CaptureContext): Promise<string[]> {
  const streams: string[] = [];
  for await (const page of context.directory.search(context.base, {
    scope: "sub",
    attributes: ["entryUUID"],
    pageSize: PAGE,
  })) {
    for (const entry of page) {
      streams.push(entryStream(String(entry.attributes.entryUUID![0]).toLowerCase()));
    }
  }
  return streams;
}

/**
 * Holds up the page that writes `stream`: an uncommitted row of it in `streams`, which that
 * page's upsert waits for. `release` rolls it back and gives the connection back.
 */
async function holdStream(
  t: { teardown(fn: () => unknown): void },
  pool: Pool,
  stream: string,
): Promise<{ release(): Promise<void> }> {
  const client = await pool.connect();
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    try {
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
  };
  t.teardown(release);
  await client.query("BEGIN");
  await client.query("INSERT INTO streams (stream_id, version) VALUES ($1, 0)", [stream]);
  return { release };
}

/** Whether some backend of the test's database waits for a lock. */
async function someoneWaitsForALock(pool: Pool): Promise<boolean> {
  const waiting = await pool.query(
    `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
  );
  return waiting.rowCount! > 0;
}

async function snapshotCounts(context: CaptureContext): Promise<Map<string, number>> {
  const result = await context.pool.query<{ stream_id: string; n: number }>(
    `SELECT stream_id, count(*)::int AS n FROM events
      WHERE type = 'EntrySnapshot' GROUP BY stream_id`,
  );
  return new Map(result.rows.map((row) => [row.stream_id, row.n]));
}

t.test(
  "an import with two writers (annal import) does not hold up a page behind one held up",
  async (t) => {
    const f = await captureFixture(t, { seedLdif: ldif });
    const streams = await streamsInPageOrder(f.context);
    const held = streams[PAGE + 1]!; // on the second page
    const next = streams[2 * PAGE + 1]!; // on the third

    const hold = await holdStream(t, f.db.pool, held);

    const imported = importEntries(f.context, { reason: "import", pageSize: PAGE, writers: 2 });
    await eventually(async () => (await snapshotCounts(f.context)).has(next), {
      what: "the third page recorded while the second waits",
    });
    t.notOk((await snapshotCounts(f.context)).has(held), "the second page is still held up");

    await hold.release();
    t.equal((await imported).recorded, streams.length);
    const counts = await snapshotCounts(f.context);
    t.same(
      streams.filter((stream) => counts.get(stream) !== 1),
      [],
      "every entry has exactly one snapshot",
    );
  },
);

t.test(
  "by default (the first start, periodic snapshots) pages are written one at a time",
  async (t) => {
    const f = await captureFixture(t, { seedLdif: ldif });
    const streams = await streamsInPageOrder(f.context);
    const held = streams[PAGE + 1]!; // on the second page
    const next = streams[2 * PAGE + 1]!; // on the third

    const hold = await holdStream(t, f.db.pool, held);
    const snapshots = importEntries(f.context, { reason: "import", pageSize: PAGE });
    await eventually(() => someoneWaitsForALock(f.db.pool), {
      what: "the second page waits for the held stream",
    });
    await hold.release();
    t.equal((await snapshots).recorded, streams.length);

    // Positions are drawn as events are inserted: the third page's come after the second's.
    const positions = await f.db.pool.query<{ stream_id: string; position: number }>(
      "SELECT stream_id, position FROM events WHERE stream_id = ANY($1::text[])",
      [[held, next]],
    );
    const at = new Map(positions.rows.map((row) => [row.stream_id, row.position]));
    t.ok(at.get(held)! < at.get(next)!, "the third page was written after the second");
  },
);

t.test("a page that fails fails the import once no other page is being written", async (t) => {
  const f = await captureFixture(t, { seedLdif: ldif });
  const streams = await streamsInPageOrder(f.context);
  const refused = streams[PAGE + 1]!; // on the second page
  const held = streams[2 * PAGE + 1]!; // on the third, written beside the second
  // The refusal counts itself in a sequence: nextval outlives the transaction it fails.
  await f.db.pool.query(
    `CREATE SEQUENCE test_refusals;
     CREATE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       IF NEW.stream_id = '${refused}' THEN
         PERFORM nextval('test_refusals');
         RAISE EXCEPTION 'refused by the test';
       END IF;
       RETURN NEW;
     END $$;
     CREATE TRIGGER test_refuse BEFORE INSERT ON events
       FOR EACH ROW EXECUTE FUNCTION test_refuse();`,
  );
  const hold = await holdStream(t, f.db.pool, held);

  let settled = false;
  const imported = importEntries(f.context, { reason: "import", pageSize: PAGE, writers: 2 });
  imported.then(
    () => (settled = true),
    () => (settled = true),
  );
  await eventually(
    async () => {
      const refusals = await f.db.pool.query("SELECT is_called FROM test_refusals");
      return refusals.rows[0].is_called && (await someoneWaitsForALock(f.db.pool));
    },
    { what: "the second page refused while the third waits" },
  );
  t.notOk(settled, "the import has not failed while the third page is being written");
  await hold.release();
  await t.rejects(imported, /refused by the test/);
  t.equal(f.db.pool.idleCount, f.db.pool.totalCount, "every connection is back in the pool");
  const counts = await snapshotCounts(f.context);
  t.notOk(counts.has(refused), "the refused page is not recorded");
  t.ok(counts.has(held), "the page written beside it is");

  await f.db.pool.query("DROP TRIGGER test_refuse ON events");
  await importEntries(f.context, { reason: "import", pageSize: PAGE });
  const again = await snapshotCounts(f.context);
  t.same(
    streams.filter((stream) => !again.has(stream)),
    [],
    "an import run again records every entry",
  );
});

t.test("an import makes the event table's partitions it and those after it need", async (t) => {
  const f = await captureFixture(t, { seedLdif: ldif });
  const { pool } = f.db;
  const partitions = async () =>
    (
      await pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'events'::regclass",
      )
    ).rows[0]!.n;
  const before = await partitions();
  const ready = await pool.query<{ upper: string }>(
    "SELECT max(upper_position)::text AS upper FROM event_partitions",
  );
  const width = await pool.query<{ width: string }>(
    "SELECT width::text AS width FROM event_partitioning",
  );
  // The log's next position is in the last partition ready.
  await pool.query("SELECT setval(pg_get_serial_sequence('events', 'position'), $1::bigint)", [
    Number(ready.rows[0]!.upper) - Number(width.rows[0]!.width) + 1,
  ]);
  await importEntries(f.context, { reason: "import", pageSize: PAGE });
  t.ok((await partitions()) > before, "partitions made beyond the last one ready");
  t.ok((await snapshotCounts(f.context)).size >= PEOPLE, "every entry imported");
});
