import t from "tap";
import { startAnnal, type RunningAnnal } from "../../src/app/index.ts";
import { createDirectoryClient } from "../../src/directory/index.ts";
import { EventStore, ensurePublication, type RecordedEvent } from "../../src/store/index.ts";
import { capturedLogger } from "../http/support.ts";
import { appConfig } from "../support/app-config.ts";
import { person } from "../support/capture.ts";
import { eventually } from "../support/eventually.ts";
import { privatePostgres, testDatabase } from "../support/postgres.ts";
import {
  followPublication,
  lsnValue,
  slotConfirmed,
  startConsumer,
  withSlot,
} from "../support/replication.ts";
import { restartablePostgres } from "../support/restartable.ts";
import { startSlapd } from "../support/slapd.ts";

t.setTimeout(300_000);

const PUBLICATION = "annal_events";
const SLOT = "annal_events_follower";

async function logOrdered(store: EventStore): Promise<RecordedEvent[]> {
  const all: RecordedEvent[] = [];
  for (let after: string | undefined; ;) {
    const page = await store.readAll({ after, limit: 500 });
    if (page.events.length === 0) return all;
    all.push(...page.events);
    after = page.cursor;
  }
}

function asReplicated(events: readonly RecordedEvent[]) {
  return events.map((e) => ({
    relation: "events",
    id: e.id,
    transactionId: e.transactionId,
    position: String(e.position),
    streamId: e.streamId,
    data: e.data,
  }));
}

const dnOf = (uid: string) => `uid=${uid},ou=people,dc=example,dc=org`;

/**
 * A pgoutput client (pg-logical-replication) follows annal's publication with a slot of its
 * own while directory writes go through a real slapd and annal captures them: annal is
 * stopped (writes made meanwhile) and started again, then PostgreSQL is stopped under annal
 * and the client (writes made meanwhile) and started again. The client reconnects on its own
 * from the LSN it acknowledged, and has every event recorded after its slot was made exactly
 * once, in log order: no gap, nothing resent after an acknowledgement.
 */
t.test(
  "a streaming client follows the publication through a restart of annal and of PostgreSQL, each event once, in log order",
  async (t) => {
    const postgres = await restartablePostgres(t, { settings: { wal_level: "logical" } });
    const slapd = await startSlapd();
    t.teardown(() => slapd.stop());
    const db = await testDatabase(t, { server: postgres.url });
    const store = await EventStore.open(db.pool);
    const config = await appConfig(t, {
      db,
      slapd,
      captureInterval: "1s",
      extraToml: `[events]\npublication = "${PUBLICATION}"\n`,
    });
    const directory = createDirectoryClient({
      url: slapd.url,
      bindDN: slapd.bindDN,
      password: slapd.password,
    });
    t.teardown(() => directory.close());
    const logged = capturedLogger();
    let annal: RunningAnnal | undefined;
    const startIt = async () => {
      annal = await startAnnal({ config, log: logged.log });
    };
    const stopIt = async () => {
      await annal?.stop();
      annal = undefined;
    };
    t.teardown(stopIt);
    const recorded = async (dn: string) =>
      (
        await db.pool.query("SELECT 1 FROM events WHERE type = 'EntryAdded' AND data->>'dn' = $1", [
          dn,
        ])
      ).rowCount === 1;

    // The first start makes the publication and imports the directory; the slot is made while
    // annal is stopped, so that no event is half before it.
    await startIt();
    await eventually(
      async () =>
        (await db.pool.query("SELECT 1 FROM capture_checkpoints WHERE source = 'accesslog'"))
          .rowCount,
      { what: "the first start's import", timeout: 60_000 },
    );
    await stopIt();

    await withSlot(db.pool, SLOT, async () => {
      const before = new Set((await logOrdered(store)).map((e) => e.id));
      const follower = followPublication(db.url, SLOT, PUBLICATION);
      t.teardown(() => follower.stop());
      const seen = (uid: string) =>
        follower.kept.some((e) => e.data !== null && (e.data as { dn?: string }).dn === dnOf(uid));
      const add = async (uids: readonly string[]) => {
        for (const uid of uids) await directory.add(dnOf(uid), person(uid));
      };
      const followed = (uids: readonly string[], what: string) =>
        eventually(() => uids.every(seen), { what, timeout: 90_000, interval: 100 });

      await startIt();
      await add(["a0", "a1", "a2"]);
      await followed(["a0", "a1", "a2"], "the client has the writes made while annal ran");

      // annal stopped and started again: what was written to the directory meanwhile is
      // captured by the next start and streamed.
      await stopIt();
      await add(["b0", "b1", "b2"]);
      await startIt();
      await followed(["b0", "b1", "b2"], "the client has the writes made while annal was down");

      // PostgreSQL stopped (fast shutdown) under annal and the client, and started again.
      const acknowledgedBefore = follower.acknowledged()!;
      await postgres.stop();
      await add(["c0", "c1", "c2"]);
      await postgres.start();
      await eventually(async () => await recorded(dnOf("c2")), {
        what: "annal captures the writes made while PostgreSQL was down",
        timeout: 90_000,
        interval: 250,
      });
      await add(["d0", "d1", "d2"]);
      await followed(
        ["c0", "c1", "c2", "d0", "d1", "d2"],
        "the client has the writes made during and after PostgreSQL's restart",
      );

      // annal stopped, the log is final: the client must end with exactly its new events.
      await stopIt();
      const expected = (await logOrdered(store)).filter((e) => !before.has(e.id));
      await eventually(() => follower.kept.length >= expected.length, {
        what: `the client has the ${expected.length} events recorded since its slot was made`,
        timeout: 60_000,
      });
      const streaming = follower.sessions.filter((s) => s.streaming);
      const acknowledged = follower.acknowledged()!;
      await eventually(async () => await slotConfirmed(db.pool, SLOT, acknowledged), {
        what: "the slot holds what the client acknowledged after the restart",
        timeout: 60_000,
      });
      await follower.stop();

      t.same(
        follower.kept,
        asReplicated(expected),
        "every event once, in log order, with its data",
      );
      t.ok(
        follower.commits.every(
          (c, i) => i === 0 || lsnValue(c.lsn) > lsnValue(follower.commits[i - 1]!.lsn),
        ),
        `no transaction was sent twice: commit LSNs rise (${follower.commits.length} commits)`,
      );
      t.equal(streaming.length, 2, "one session before PostgreSQL's restart, one after");
      t.match(streaming[0]?.ended, /terminat|shut|ended/, "the first ended with the server");
      const resumedFrom = streaming[1]?.from;
      t.ok(
        resumedFrom !== undefined && lsnValue(resumedFrom) >= lsnValue(acknowledgedBefore),
        `the second started from the LSN acknowledged last (${resumedFrom}, at least ${acknowledgedBefore})`,
      );
      t.ok(
        follower.commits.some((c) => c.session > 0),
        "the second session streamed transactions",
      );
      t.same(follower.failures, [], "the client reconnected each time");
      t.same(
        logged.lines.filter((l) => l.publication === PUBLICATION).map((l) => l.outcome),
        ["created"],
        "the first start made the publication; the later ones found it as it was",
      );
    });
  },
);

/**
 * What docs/publication.md says of a slot whose client lags: with `max_slot_wal_keep_size`
 * set, a checkpoint that finds the slot's WAL past the limit invalidates the slot, and its
 * client is refused with an error when it comes back, instead of resuming with a gap.
 */
t.test(
  "a slot that lags past max_slot_wal_keep_size is invalidated and its client refused, not fed a gap",
  async (t) => {
    const server = await privatePostgres({
      settings: { wal_level: "logical", max_slot_wal_keep_size: "1MB" },
    });
    const db = await testDatabase(t, { server });
    const store = await EventStore.open(db.pool);
    await ensurePublication(db.pool, PUBLICATION);
    const slot = "annal_events_lagging";
    await withSlot(db.pool, slot, async () => {
      const state = async () =>
        (
          await db.pool.query<{ wal_status: string; invalidation_reason: string | null }>(
            "SELECT wal_status, invalidation_reason FROM pg_replication_slots WHERE slot_name = $1",
            [slot],
          )
        ).rows[0];
      t.match(await state(), { wal_status: "reserved", invalidation_reason: null });
      // Events the client has not read yet; then WAL past the limit (each pass ends a segment)
      // until a checkpoint removes the WAL the slot still needs.
      for (let n = 0; n < 3; n++) {
        await store.appendToStream("lagging", [{ type: "Replicated", data: { n } }]);
      }
      await eventually(
        async () => {
          await db.pool.query("SELECT pg_switch_wal()");
          await store.appendToStream("filler", [{ type: "Replicated", data: {} }]);
          await db.pool.query("CHECKPOINT");
          return (await state())?.wal_status === "lost";
        },
        { what: "the checkpoint invalidates the slot", timeout: 60_000, interval: 100 },
      );
      t.match(await state(), { wal_status: "lost", invalidation_reason: "wal_removed" });

      const consumer = startConsumer(db.url, slot, PUBLICATION);
      await eventually(() => consumer.errors.length > 0, {
        what: "the client is refused",
      });
      await consumer.stop();
      const refusal = consumer.errors[0]?.message;
      t.match(refusal, /invalidated|can no longer/, `the server says why: ${refusal}`);
      t.same(consumer.kept, [], "nothing is streamed from a slot that lost its WAL");
    });
  },
);

/**
 * A crash of PostgreSQL (no shutdown checkpoint) loses what the slot's confirmed position was
 * since the last checkpoint: the server alone would send those transactions again. The client
 * starts from the LSN it acknowledged itself, so it gets none of them twice.
 */
t.test(
  "after a crash of PostgreSQL the client resumes from its own acknowledged LSN, ahead of the slot's, and gets nothing twice",
  async (t) => {
    // No checkpoint between the slot's creation and the crash but the ones the test makes.
    const postgres = await restartablePostgres(t, {
      settings: { wal_level: "logical", checkpoint_timeout: "1d", max_wal_size: "1GB" },
    });
    const db = await testDatabase(t, { server: postgres.url });
    const store = await EventStore.open(db.pool);
    await ensurePublication(db.pool, PUBLICATION);
    const slot = "annal_events_crash";
    const append = async (from: number, count: number) => {
      for (let n = from; n < from + count; n++) {
        await store.appendToStream(`crash-${n % 3}`, [{ type: "Replicated", data: { n } }]);
      }
    };
    await withSlot(db.pool, slot, async () => {
      const follower = followPublication(db.url, slot, PUBLICATION);
      t.teardown(() => follower.stop());
      await append(0, 10);
      await eventually(() => follower.kept.length === 10, {
        what: "the client has the first ten events",
        timeout: 60_000,
      });
      const acknowledged = follower.acknowledged()!;
      await eventually(async () => await slotConfirmed(db.pool, slot, acknowledged), {
        what: "the server has the client's acknowledgement (in memory)",
        timeout: 60_000,
      });

      await postgres.crash();
      await postgres.start();
      const after = await db.pool.query<{ lsn: string }>(
        "SELECT confirmed_flush_lsn::text AS lsn FROM pg_replication_slots WHERE slot_name = $1",
        [slot],
      );
      const recovered = after.rows[0]!.lsn;
      t.ok(
        lsnValue(recovered) < lsnValue(acknowledged),
        `the slot came back behind the client (${recovered} < ${acknowledged})`,
      );

      await append(10, 10);
      const all = await logOrdered(store);
      await eventually(() => follower.kept.length >= all.length, {
        what: `the client has all ${all.length} events`,
        timeout: 60_000,
      });
      await follower.stop();
      t.same(follower.kept, asReplicated(all), "every event once, in log order");
      t.ok(
        follower.commits.every(
          (c, i) => i === 0 || lsnValue(c.lsn) > lsnValue(follower.commits[i - 1]!.lsn),
        ),
        "no transaction was sent twice",
      );
      t.same(follower.failures, []);
    });
  },
);
