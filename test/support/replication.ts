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
      await service.acknowledge(message.commitEndLsn!);
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

/**
 * Whether the server holds the slot as confirmed up to `lsn` (the client library confirms the
 * byte after the LSN it is given, as the protocol counts).
 */
export async function slotConfirmed(pool: Pool, slot: string, lsn: string): Promise<boolean> {
  const result = await pool.query<{ same: boolean }>(
    `SELECT confirmed_flush_lsn > $2::pg_lsn AS same FROM pg_replication_slots
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
