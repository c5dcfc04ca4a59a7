import type { PoolClient } from "../db/index.ts";
import { isAnnalError } from "../errors/index.ts";
import { captureNotRecorded } from "../metrics.ts";
import type { CaptureContext } from "./context.ts";
import {
  CAPTURE_FAILURES_STREAM,
  CHANGE_NOT_RECORDED,
  type DirectoryChangeNotRecorded,
} from "../events/index.ts";

/**
 * Records one change with `record`, inside a savepoint of the capture's transaction. If it
 * cannot be recorded (the database refuses it, or it cannot be read into an event), the
 * savepoint is rolled back, a `DirectoryChangeNotRecorded` event says which change and why,
 * and capture goes on: a change that cannot be recorded must never stop every change after
 * it. The error is described by its code and our own words: a PostgreSQL error's message,
 * `detail` and `where` may quote the value, which must not reach the log or a log line.
 *
 * @returns what `record` returned, or undefined when the change was noted as not recorded.
 */
export async function recordIsolated<T>(
  tx: PoolClient,
  context: Pick<CaptureContext, "store" | "log">,
  change: Omit<DirectoryChangeNotRecorded, "error">,
  record: () => Promise<T>,
): Promise<T | undefined> {
  await tx.query("SAVEPOINT capture_change");
  try {
    const result = await record();
    await tx.query("RELEASE SAVEPOINT capture_change");
    return result;
  } catch (error) {
    await tx.query("ROLLBACK TO SAVEPOINT capture_change");
    const failure: DirectoryChangeNotRecorded = { ...change, error: describe(error) };
    await context.store.appendToStream(
      CAPTURE_FAILURES_STREAM,
      [
        {
          type: CHANGE_NOT_RECORDED,
          data: failure,
          metadata: { source: change.source },
          idempotencyKey: `capture-failure:${change.source}:${change.changeId}`,
        },
      ],
      { tx },
    );
    captureNotRecorded.inc({ source: change.source });
    context.log.error(
      { source: change.source, changeId: change.changeId, dn: change.dn, ...failure.error },
      "a directory change could not be recorded; capture goes on (see DirectoryChangeNotRecorded)",
    );
    return undefined;
  }
}

function describe(error: unknown): DirectoryChangeNotRecorded["error"] {
  const sqlstate = (error as { code?: unknown } | null)?.code;
  if (isAnnalError(error)) return { code: error.code, sqlstate: null, message: error.message };
  if (typeof sqlstate === "string" && /^[0-9A-Z]{5}$/.test(sqlstate)) {
    return {
      code: "ANNAL_CAPTURE_CHANGE_REFUSED",
      sqlstate,
      message: `PostgreSQL refused the change's event (SQLSTATE ${sqlstate})`,
    };
  }
  return {
    code: "ANNAL_CAPTURE_CHANGE_UNREADABLE",
    sqlstate: null,
    message: `the change could not be read into an event (${(error as Error)?.name ?? "error"})`,
  };
}
