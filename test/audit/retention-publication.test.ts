import t from "tap";
import { chainBatch, eraseEntry, runRetention } from "../../src/audit/index.ts";
import type { Pool } from "../../src/db/index.ts";
import {
  comparePositions,
  ensureEventPartitions,
  ensurePublication,
  EventStore,
  logOrder,
  type RecordedEvent,
} from "../../src/store/index.ts";
import { databaseClock, startWorkflow } from "../../src/workflow/index.ts";
import { EntryHistory } from "../support/entries.ts";
import { eventually } from "../support/eventually.ts";
import { privatePostgres, testDatabase } from "../support/postgres.ts";
import { startConsumer, withSlot, type ReplicatedChange } from "../support/replication.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";

t.setTimeout(300_000);

// Logical decoding needs `wal_level = logical`, a server setting: this file's server is its own.
const server = await privatePostgres({ settings: { wal_level: "logical" } });

const PUBLICATION = "annal_events";
const quote = (name: string) => `"${name.replaceAll(`"`, `""`)}"`;
const PEOPLE = "ou=people,dc=example,dc=org";
const day = (n: number, hour = 9) => new Date(Date.UTC(2026, 10, n, hour));
/** Entries' horizon: day 10, 09:00. */
const HORIZON = day(10);

const DOUBLE = `
import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "double",
  version: 1,
  parameters: z.object({ n: z.number() }),
  async run(flow, { n }) {
    const twice = await flow.step("double", () => n * 2);
    return { twice };
  },
});
`;

/** A row of `events` as text and JSON, whether pgoutput or a query gave it. */
function rowOf(row: Record<string, unknown>) {
  const text = (value: unknown) => (value === null || value === undefined ? null : String(value));
  const moment = (value: unknown) => new Date(value as string | Date).toISOString();
  return {
    position: text(row.position),
    transaction_id: text(row.transaction_id),
    id: text(row.id),
    stream_id: text(row.stream_id),
    stream_version: text(row.stream_version),
    type: text(row.type),
    data: row.data,
    metadata: row.metadata,
    idempotency_key: text(row.idempotency_key),
    occurred_at: moment(row.occurred_at),
    recorded_at: moment(row.recorded_at),
  };
}
type Row = ReturnType<typeof rowOf>;

/** The log as a fresh read gives it, in log order (the store's helper). */
async function freshRead(pool: Pool): Promise<Row[]> {
  const result = await pool.query<Record<string, unknown>>(
    `SELECT * FROM events AS e ORDER BY ${logOrder("e")}`,
  );
  return result.rows.map(rowOf);
}

/**
 * A mirror of the log kept by position, as a client that mirrors it does: inserts and updates
 * put the row, deletes take the key away; in log order at the end.
 */
function mirrored(start: readonly Row[], transactions: readonly ReplicatedChange[][]): Row[] {
  const mirror = new Map(start.map((row) => [row.position, row]));
  for (const change of transactions.flat()) {
    if (change.kind === "delete") mirror.delete(String(change.key.position));
    else mirror.set(String(change.row.position), rowOf(change.row));
  }
  return [...mirror.values()].toSorted((a, b) =>
    comparePositions(
      { position: Number(a.position), transactionId: a.transaction_id! },
      { position: Number(b.position), transactionId: b.transaction_id! },
    ),
  );
}

async function chainAll(pool: Pool): Promise<void> {
  while ((await chainBatch(pool, 1000)) > 0);
}

/** Appends a marker and waits until the consumer has it: everything committed before is in. */
async function caughtUp(
  store: EventStore,
  consumer: ReturnType<typeof startConsumer>,
  name: string,
): Promise<void> {
  await store.appendToStream(`marker-${name}`, [{ type: "Marker", data: { name } }]);
  await eventually(() => consumer.kept.some((e) => e.streamId === `marker-${name}`), {
    what: `the consumer has marker ${name}`,
    // The walsender decodes once the commit is flushed; a loaded machine took long once.
    timeout: 60_000,
  });
}

const person = (uid: string) => ({
  dn: `uid=${uid},${PEOPLE}`,
  type: "user",
  attributes: {
    objectClass: ["inetOrgPerson"],
    uid: [uid],
    cn: [`${uid} Example`],
    sn: ["Example"],
    mail: [`${uid}@example.org`],
  },
});

const isFolded = (cut: { position: number; transactionId: string }) => (event: RecordedEvent) =>
  comparePositions(event, cut) < 0;

t.test(
  "a logical-replication client sees a retention run as the deletes of the folded events, the checkpoints' inserts at their positions and LogRetained",
  async (t) => {
    const db = await testDatabase(t, { server });
    await ensurePublication(db.pool, PUBLICATION);
    const slot = "annal_retention_test";
    await withSlot(db.pool, slot, async () => {
      const start = await freshRead(db.pool);
      const consumer = startConsumer(db.url, slot, PUBLICATION);

      // A finished instance, then entries' history on both sides of the horizon.
      const dir = definitionsDir(t, { "double.ts": DOUBLE });
      const f = await workflowFixture(t, { dir, db });
      const { instanceId } = await startWorkflow(f, {
        name: "double",
        parameters: { n: 21 },
        as: actor("rita"),
      });
      await f.settled(instanceId, "COMPLETED");
      const workflowHorizon = await databaseClock(db.pool);
      const history = new EntryHistory(db.pool, f.store);
      const alice = await history.add(person("alice"), { at: day(1) });
      const bob = await history.add(person("bob"), { at: day(1) });
      await history.modify(alice, { title: ["Manager"] }, { at: day(3) });
      await history.modify(bob, { title: ["Clerk"] }, { at: day(4) });
      await history.delete(bob, { at: day(5) });
      await history.modify(alice, { title: ["Director"] }, { at: day(12) }); // the cut
      await chainAll(db.pool);
      const before = await f.store.readStream(`workflow-${instanceId}`);
      t.ok(before.length > 2, "the instance has a stream to fold");
      await caughtUp(f.store, consumer, "before");
      const logBefore = await f.store.readAll({ limit: 10_000 });
      const changesBefore = consumer.transactions.length;

      const report = await runRetention(db.pool, { horizon: HORIZON, workflowHorizon });
      t.equal(report.workflowsFolded, 1, "the finished instance is folded");
      t.equal(report.streamsFolded, 3, "alice's, bob's and the instance's streams");
      await caughtUp(f.store, consumer, "after");

      const cut = report.cut!;
      const folded = logBefore.events.filter(
        (e) =>
          isFolded(cut)(e) &&
          (e.streamId.startsWith("entry-") || e.streamId === `workflow-${instanceId}`),
      );
      t.equal(folded.length, report.eventsRemoved, "every folded event, and nothing else");
      const lastOf = new Map<string, RecordedEvent>();
      for (const e of folded) {
        if ((lastOf.get(e.streamId)?.streamVersion ?? -1) < e.streamVersion)
          lastOf.set(e.streamId, e);
      }

      const [run, marker, ...more] = consumer.transactions.slice(changesBefore);
      t.same(more, [], "nothing after the marker");
      t.match(marker, [{ kind: "insert", row: { stream_id: "marker-after" } }]);
      t.ok(run, "the run arrives as one transaction");
      const changes = run!;

      t.same(
        changes
          .map((c) => (c.kind === "delete" ? "delete" : `${c.kind} ${String(c.row.type)}`))
          .filter((kind, i, all) => kind !== all[i - 1]),
        [
          "delete",
          "insert StreamCheckpointed",
          "delete",
          "insert WorkflowCheckpointed",
          "insert LogRetained",
        ],
        "fold by fold (entries', then instances'): the deletes, then the checkpoints; LogRetained last",
      );
      // The deletes: one for each folded event, by its key alone.
      const deletes = changes.filter((c) => c.kind === "delete");
      t.same(
        deletes.map((c) => String(c.key.position)).toSorted((a, b) => Number(a) - Number(b)),
        folded.map((e) => String(e.position)).toSorted((a, b) => Number(a) - Number(b)),
        "a delete of each folded event by position",
      );
      t.ok(
        deletes.every((c) =>
          Object.entries(c.key).every(([k, v]) => k === "position" || v == null),
        ),
        "a delete carries the key only",
      );
      t.same(
        changes.filter((c) => c.kind === "update"),
        [],
        "retention updates nothing",
      );

      // The inserts: each stream's checkpoint where its last folded event was, then LogRetained.
      const inserts = changes.flatMap((c) => (c.kind === "insert" ? [rowOf(c.row)] : []));
      t.equal(changes.length, deletes.length + inserts.length);
      const retained = inserts.at(-1)!;
      t.equal(changes.at(-1)!.kind, "insert", "LogRetained is the run's last change");
      t.match(retained, {
        stream_id: "log-retention",
        type: "LogRetained",
        data: {
          horizon: HORIZON.toISOString(),
          cut: { position: cut.position, transactionId: cut.transactionId },
          streamsFolded: 3,
          eventsRemoved: report.eventsRemoved,
        },
      });
      const checkpoints = inserts.slice(0, -1);
      t.same(
        checkpoints
          .map((row) => ({
            position: row.position,
            transaction_id: row.transaction_id,
            stream_id: row.stream_id,
            stream_version: row.stream_version,
            type: row.type,
          }))
          .toSorted((a, b) => Number(a.position) - Number(b.position)),
        [...lastOf.values()]
          .map((e) => ({
            position: String(e.position),
            transaction_id: e.transactionId,
            stream_id: e.streamId,
            stream_version: String(e.streamVersion),
            type: e.streamId.startsWith("entry-") ? "StreamCheckpointed" : "WorkflowCheckpointed",
          }))
          .toSorted((a, b) => Number(a.position) - Number(b.position)),
        "a checkpoint per stream, at the position, transaction and version of its last folded event",
      );
      for (const checkpoint of checkpoints) {
        const deleted = changes.findIndex(
          (c) => c.kind === "delete" && String(c.key.position) === checkpoint.position,
        );
        const made = changes.findIndex(
          (c) => c.kind === "insert" && String(c.row.position) === checkpoint.position,
        );
        t.ok(
          deleted >= 0 && deleted < made,
          `position ${checkpoint.position} deleted, then made again`,
        );
      }

      t.same(
        mirrored(start, consumer.transactions),
        await freshRead(db.pool),
        "a client applying what it received holds what a fresh read of the log gives",
      );
      t.same(consumer.errors, []);
      await consumer.stop();
    });
  },
);

t.test(
  "a dropped partition sends nothing, and an erasure after a run arrives as updates then EntryErased",
  async (t) => {
    const db = await testDatabase(t, { server });
    // Partitions four positions wide, from an empty log (as test/audit/retention.test.ts).
    const made = await db.pool.query<{ name: string }>("SELECT name FROM event_partitions");
    for (const { name } of made.rows) {
      await db.pool.query(`ALTER TABLE events DETACH PARTITION ${quote(name)}`);
      await db.pool.query(`DROP TABLE ${quote(name)}`);
    }
    await db.pool.query("DELETE FROM event_partitions");
    await db.pool.query("UPDATE event_partitioning SET width = 4");
    await ensureEventPartitions(db.pool);
    await ensurePublication(db.pool, PUBLICATION);
    const store = await EventStore.open(db.pool);
    const slot = "annal_retention_partitions";
    await withSlot(db.pool, slot, async () => {
      const consumer = startConsumer(db.url, slot, PUBLICATION);
      const history = new EntryHistory(db.pool, store);
      const ids: string[] = [];
      for (const uid of ["alice", "bob", "carol"])
        ids.push(await history.add(person(uid), { at: day(1) })); // 1 to 3
      for (const id of ids) await history.modify(id, { title: ["Lead"] }, { at: day(3) }); // 4 to 6
      await history.modify(ids[0]!, { title: ["Head"] }, { at: day(12) }); // 7: the cut
      await history.delete(ids[1]!, { at: day(13) }); // 8: bob's values in its old state
      await chainAll(db.pool);
      await caughtUp(store, consumer, "before");
      const changesBefore = consumer.transactions.length;

      const report = await runRetention(db.pool, { horizon: HORIZON });
      t.same(report.partitionsDropped, ["events_from_0"], "1 to 3 were folded into 4 to 6");
      await caughtUp(store, consumer, "after");
      const [run, marker, ...more] = consumer.transactions.slice(changesBefore);
      t.match(run?.at(-1), { kind: "insert", row: { type: "LogRetained" } });
      t.match(marker, [{ kind: "insert", row: { stream_id: "marker-after" } }]);
      t.same(more, [], "the partition's drop sent nothing: its rows were deleted in the run");

      const erasedBefore = consumer.transactions.length;
      const erasure = await eraseEntry(db.pool, { entryUUID: ids[1]!, reason: "request 42" });
      await caughtUp(store, consumer, "erased");
      const [erased] = consumer.transactions.slice(erasedBefore);
      const updates = erased!.filter((c) => c.kind === "update");
      t.same(
        updates.map((c) => Number(c.kind === "update" && c.row.position)).toSorted((a, b) => a - b),
        erasure.positions.toSorted((a, b) => a - b),
        "an update of each event erased",
      );
      t.ok(
        updates.every((c) => c.kind === "update" && c.row.stream_id === `entry-${ids[1]}`),
        "all of bob's stream",
      );
      t.ok(
        updates.every((c) => c.kind === "update" && c.old === null),
        "no old key: the key (position) does not change",
      );
      t.match(JSON.stringify(updates), /\(erased\)/);
      t.notMatch(
        JSON.stringify(updates),
        /bob@example\.org/,
        "the updates carry the redacted rows",
      );
      t.match(erased!.at(-1), { kind: "insert", row: { type: "EntryErased" } });
      t.equal(erased!.length, updates.length + 1, "and nothing else");
      t.same(
        mirrored([], consumer.transactions),
        await freshRead(db.pool),
        "a client applying what it received holds what a fresh read of the log gives",
      );
      t.same(consumer.errors, []);
      await consumer.stop();
    });
  },
);
