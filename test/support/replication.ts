import pg from "pg";
import { LogicalReplicationService, PgoutputPlugin } from "pg-logical-replication";
import type { Pgoutput } from "pg-logical-replication";
import type { Pool } from "../../src/db/index.ts";
import { eventually } from "./eventually.ts";

/** An event as a logical-replication client received it inserted (a row of `events`). */
export interface Replicated {
  readonly relation: string;
  readonly id: string;
  readonly transactionId: string;
  readonly position: string;
  readonly streamId: string;
  readonly data: unknown;
}

/**
 * One row change as pgoutput sent it: an insert with the new row; an update with the new row
 * and the old row's key when the server sent one (`old`, else null); a delete with the old
 * row's key (the replica identity, `position`) and nothing for the other columns.
 */
export type ReplicatedChange =
  | { readonly kind: "insert"; readonly row: Record<string, unknown> }
  | {
      readonly kind: "update";
      readonly row: Record<string, unknown>;
      readonly old: Record<string, unknown> | null;
    }
  | { readonly kind: "delete"; readonly key: Record<string, unknown> };

/**
 * A client of the publication through the replication protocol and pgoutput, as Debezium is:
 * it keeps a transaction's rows once the transaction's commit arrives, then confirms the
 * commit's LSN to the server (so a restart resumes after it). `kept` holds the inserts of
 * `events`; `transactions` every change, grouped by transaction in commit order.
 */
export function startConsumer(url: string, slot: string, publication: string) {
  const kept: Replicated[] = [];
  const transactions: ReplicatedChange[][] = [];
  let pending: { inserts: Replicated[]; changes: ReplicatedChange[] } = {
    inserts: [],
    changes: [],
  };
  let confirmed: string | undefined;
  const service = new LogicalReplicationService(
    { connectionString: url },
    { acknowledge: { auto: false, timeoutSeconds: 0 }, flowControl: { enabled: true } },
  );
  service.on("data", async (_lsn: string, message: Pgoutput.Message) => {
    if (message.tag === "insert") {
      const row = message.new;
      pending.inserts.push({
        relation: message.relation.name,
        id: String(row.id),
        transactionId: String(row.transaction_id),
        position: String(row.position),
        streamId: String(row.stream_id),
        data: row.data,
      });
      pending.changes.push({ kind: "insert", row: { ...row } });
    } else if (message.tag === "update") {
      const old = message.key ?? message.old;
      pending.changes.push({ kind: "update", row: { ...message.new }, old: old && { ...old } });
    } else if (message.tag === "delete") {
      pending.changes.push({ kind: "delete", key: { ...(message.key ?? message.old) } });
    } else if (message.tag === "commit") {
      kept.push(...pending.inserts);
      if (pending.changes.length > 0) transactions.push(pending.changes);
      pending = { inserts: [], changes: [] };
      await acknowledgeThrough(service, message.commitEndLsn!);
      confirmed = message.commitEndLsn!;
    }
  });
  const errors: Error[] = [];
  service.on("error", (error: Error) => errors.push(error));
  const plugin = new PgoutputPlugin({ protoVersion: 1, publicationNames: [publication] });
  service.subscribe(plugin, slot).catch((error: Error) => errors.push(error));
  return {
    kept,
    transactions,
    errors,
    confirmed: () => confirmed,
    stop: () => service.destroy(),
  };
}

/** One connection of a `followPublication` client, from its START_REPLICATION to its end. */
export interface FollowerSession {
  /** The LSN it asked the slot to start from: the one acknowledged last, or none at first. */
  readonly from: string | undefined;
  /** Whether the server started streaming (CopyBoth); a refused attempt is retried. */
  streaming: boolean;
  /** Why it ended: the server's or the connection's error, or "ended" when it just closed. */
  ended?: string;
}

/**
 * A long-running client of the publication, as a connector (Debezium) is: it keeps a
 * transaction's inserts once the transaction's commit arrives and acknowledges the commit's
 * end LSN; between transactions it also acknowledges the LSN of each keepalive (everything
 * before it has been received), so the slot advances while the log is quiet and the server's
 * shutdown, which waits for its walsenders' clients to confirm what they were sent, is not
 * held up. When its stream ends (the server restarted, the connection broke) it connects again
 * once the server accepts connections and starts from the LSN it acknowledged last: the
 * server skips what was committed before it, whether or not it had persisted that
 * acknowledgement (the slot's position reaches the disk at checkpoints only: after a crash it
 * is where the last checkpoint left it).
 *
 * Handlers are synchronous (no flow control), so at a keepalive every message sent before it
 * has been handled. `commits` holds each commit's end LSN in the order received, with its
 * session: a resent transaction shows as an LSN that does not increase.
 */
export function followPublication(url: string, slot: string, publication: string) {
  const kept: Replicated[] = [];
  const commits: { lsn: string; session: number }[] = [];
  const sessions: FollowerSession[] = [];
  let acknowledged: string | undefined;
  let stopped = false;
  let service: LogicalReplicationService | undefined;

  const acknowledge = (current: LogicalReplicationService, lsn: string) => {
    if (acknowledged !== undefined && lsnValue(lsn) <= lsnValue(acknowledged)) return;
    void acknowledgeThrough(current, lsn);
    acknowledged = lsn;
  };

  /** One connection; resolves whether it streamed, once it has ended. */
  async function session(): Promise<boolean> {
    const current = new LogicalReplicationService(
      { connectionString: url },
      { acknowledge: { auto: false, timeoutSeconds: 0 }, flowControl: { enabled: false } },
    );
    service = current;
    const index = sessions.length;
    const state: FollowerSession = { from: acknowledged, streaming: false };
    sessions.push(state);
    let pending: Replicated[] | undefined;
    current.on("start", () => {
      state.streaming = true;
    });
    current.on("data", (_lsn: string, message: Pgoutput.Message) => {
      if (message.tag === "begin") {
        pending = [];
      } else if (message.tag === "insert") {
        const row = message.new;
        pending?.push({
          relation: message.relation.name,
          id: String(row.id),
          transactionId: String(row.transaction_id),
          position: String(row.position),
          streamId: String(row.stream_id),
          data: row.data,
        });
      } else if (message.tag === "commit") {
        kept.push(...(pending ?? []));
        pending = undefined;
        commits.push({ lsn: message.commitEndLsn!, session: index });
        acknowledge(current, message.commitEndLsn!);
      }
    });
    current.on("heartbeat", (lsn: string) => {
      if (pending === undefined) acknowledge(current, lsn);
    });
    current.on("error", (error: Error) => {
      state.ended ??= error.message;
    });
    const plugin = new PgoutputPlugin({ protoVersion: 1, publicationNames: [publication] });
    if (stopped) return true; // stopped while this attempt was being made
    try {
      await (state.from === undefined
        ? current.subscribe(plugin, slot)
        : current.subscribe(plugin, slot, state.from));
    } catch (error) {
      state.ended ??= (error as Error).message;
    }
    state.ended ??= "ended";
    await current.destroy();
    return state.streaming;
  }

  const failures: Error[] = [];
  const running = (async () => {
    while (!stopped) {
      // A refused attempt (the server still starting) is tried again until one streams.
      await eventually(async () => stopped || ((await accepts(url)) && (await session())), {
        what: `a replication session on slot ${slot}`,
        timeout: 120_000,
        interval: 100,
      });
    }
  })().catch((error: unknown) => {
    failures.push(error as Error);
  });

  return {
    kept,
    commits,
    sessions,
    /** What broke the client itself (no session for two minutes), not a session's end. */
    failures,
    acknowledged: () => acknowledged,
    async stop() {
      stopped = true;
      await service?.destroy();
      await running;
    },
  };
}

/**
 * Tells the server that everything before `lsn` (a commit's end LSN, a keepalive's LSN) is
 * received and kept, so that the slot starts there after a restart.
 *
 * pg-logical-replication's `acknowledge(lsn)` reports `lsn` plus one: right for the start of
 * a change, one byte too far for a commit's end, which is where the next WAL record starts.
 * When that record is another transaction's commit (two transactions that commit back to
 * back), a slot confirmed one byte past it skips that transaction after a restart: it is
 * never sent. So the library is given one less, and the server gets the end LSN itself, as
 * PostgreSQL's own subscriber and pg_recvlogical report it.
 */
export function acknowledgeThrough(
  service: LogicalReplicationService,
  lsn: string,
): Promise<boolean> {
  return service.acknowledge(lsnText(lsnValue(lsn) - 1n));
}

/** Whether the server at `url` accepts a connection now. */
async function accepts(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => {});
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** An LSN (`16/B374D848`) as a number, to compare two. */
export function lsnValue(lsn: string): bigint {
  const [high = "0", low = "0"] = lsn.split("/");
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

function lsnText(value: bigint): string {
  return `${(value >> 32n).toString(16).toUpperCase()}/${(value & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** Whether the server holds the slot as confirmed up to `lsn` (`acknowledgeThrough`). */
export async function slotConfirmed(pool: Pool, slot: string, lsn: string): Promise<boolean> {
  const result = await pool.query<{ same: boolean }>(
    `SELECT confirmed_flush_lsn >= $2::pg_lsn AS same FROM pg_replication_slots
      WHERE slot_name = $1`,
    [slot, lsn],
  );
  return result.rows[0]?.same === true;
}

/**
 * A logical replication slot for the test, dropped when `work` is done, whatever it did: a
 * database with a slot cannot be dropped.
 */
export async function withSlot(pool: Pool, slot: string, work: () => Promise<void>): Promise<void> {
  await pool.query("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", [slot]);
  try {
    await work();
  } finally {
    await pool.query(
      `SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots
        WHERE slot_name = $1 AND active_pid IS NOT NULL`,
      [slot],
    );
    await eventually(
      async () =>
        (
          await pool.query(
            "SELECT 1 FROM pg_replication_slots WHERE slot_name = $1 AND active_pid IS NULL",
            [slot],
          )
        ).rowCount === 1,
      { what: "the slot is released" },
    );
    await pool.query("SELECT pg_drop_replication_slot($1)", [slot]);
  }
}
