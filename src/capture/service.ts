import type { DirectoryConfig } from "../config/index.ts";
import { parseLdapFilter } from "../filters/index.ts";
import type { DirectorySchema } from "../directory/index.ts";
import { accesslogHead, captureFromAccesslog } from "./from-accesslog.ts";
import { captureByPolling } from "./from-polling.ts";
import { formatGeneralizedTime } from "./accesslog.ts";
import { readCaptureCheckpoint, writeCaptureCheckpoint } from "./checkpoints.ts";
import type { CaptureContext, CaptureResult } from "./context.ts";
import { importEntries } from "./import.ts";
import type { Normalizer } from "./normalize.ts";
import { NameSet } from "../events/index.ts";
import { entryTypeResolver } from "./types.ts";

export type CaptureSource = "accesslog" | "poll";

/** The normaliser for a configuration: its entry types, and the attributes never recorded. */
export function createNormalizer(
  schema: DirectorySchema,
  directory: Pick<DirectoryConfig, "types" | "capture">,
): Normalizer {
  return {
    schema,
    redact: new NameSet(directory.capture.redact),
    typeOf: entryTypeResolver(
      directory.types.map((type) => ({
        name: type.name,
        base: type.base,
        filter: parseLdapFilter(type.filter),
      })),
    ),
  };
}

/**
 * On the first start of a source: notes where the directory's change record stands, takes a
 * snapshot of every entry, then sets the source's checkpoint to the noted place, so changes
 * made during the import are captured afterwards. Later starts do nothing. One process at a
 * time (an advisory lock); the others wait and then find the checkpoint set.
 */
export async function ensureImported(
  context: CaptureContext,
  source: CaptureSource,
  options: { onProgress?: (done: number, total: number) => void } = {},
): Promise<boolean> {
  const client = await context.pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock(hashtext('annal:capture:import'))");
    if ((await readCaptureCheckpoint(client, source)) !== undefined) return false;
    const start =
      source === "accesslog"
        ? await accesslogHead(context, "19700101000000.000000Z")
        : // modifyTimestamp has whole seconds: start a second back and compare states.
          formatGeneralizedTime(new Date(Date.now() - 1000)).replace(/\.\d+Z$/, "Z");
    context.log.info({ source }, "first start of capture: importing every entry");
    const result = await importEntries(context, { reason: "import", ...options });
    await writeCaptureCheckpoint(client, source, start);
    await writeCaptureCheckpoint(client, "snapshot", new Date().toISOString());
    context.log.info({ source, entries: result.recorded }, "import done");
    return true;
  } finally {
    await client
      .query("SELECT pg_advisory_unlock(hashtext('annal:capture:import'))")
      .catch(() => {});
    client.release();
  }
}

/** One capture pass of the configured source. */
export async function captureOnce(
  context: CaptureContext,
  source: CaptureSource,
  options: { reconcile?: boolean } = {},
): Promise<CaptureResult> {
  await ensureImported(context, source);
  return source === "accesslog"
    ? captureFromAccesslog(context)
    : captureByPolling(context, options);
}

/**
 * Periodic snapshots: when the last one is older than `interval`, a snapshot event for every
 * entry, so that a replay can start from an entry's latest snapshot.
 */
export async function snapshotIfDue(context: CaptureContext, interval: number): Promise<boolean> {
  if (interval <= 0) return false;
  const last = await readCaptureCheckpoint(context.pool, "snapshot");
  if (last !== undefined && Date.now() - Date.parse(last) < interval) return false;
  await importEntries(context, { reason: "periodic" });
  await writeCaptureCheckpoint(context.pool, "snapshot", new Date().toISOString());
  return true;
}
