import type { DirectoryConfig } from "../config/index.ts";
import { withSessionLock } from "../db/index.ts";
import { parseLdapFilter } from "../filters/index.ts";
import type { DirectorySchema } from "../directory/index.ts";
import { accesslogHead, captureFromAccesslog } from "./from-accesslog.ts";
import { captureByPolling, reconcileByPolling } from "./from-polling.ts";
import { captureFromChangelog, changelogHead } from "./from-changelog.ts";
import { adHead, captureFromAD } from "./from-ad.ts";
import { pollTime } from "./modified-since.ts";
import { readCaptureCheckpoint, writeCaptureCheckpoint } from "./checkpoints.ts";
import type { CaptureContext, CaptureResult } from "./context.ts";
import { importEntries, importTimings, type ImportOptions } from "./import.ts";
import { paceByProjections } from "./pace.ts";
import { checkCaptureSources } from "./preflight.ts";
import type { Normalizer } from "./normalize.ts";
import { NameSet } from "../events/index.ts";
import { entryTypeResolver } from "./types.ts";

export type CaptureSource = "accesslog" | "changelog" | "ad" | "poll";

/** The normaliser for a configuration: its entry types, and the attributes never recorded. */
export function createNormalizer(
  schema: DirectorySchema,
  directory: Pick<DirectoryConfig, "types"> &
    Partial<Pick<DirectoryConfig, "identity">> & {
      readonly capture: Pick<DirectoryConfig["capture"], "redact"> &
        Partial<DirectoryConfig["capture"]>;
    },
): Normalizer {
  return {
    schema,
    identity: directory.identity ?? "auto",
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
  options: Pick<ImportOptions, "onProgress" | "writers" | "timings" | "signal"> = {},
): Promise<boolean> {
  return withSessionLock(context.pool, "annal:capture:import", async (client) => {
    if ((await readCaptureCheckpoint(client, source)) !== undefined) return false;
    await checkCaptureSources(context, source);
    const start =
      source === "accesslog"
        ? await accesslogHead(context, "19700101000000.000000Z")
        : source === "changelog"
          ? await changelogHead(context)
          : source === "ad"
            ? // Read before the import: a write during it is read again by the first pass.
              await adHead(context)
            : // modifyTimestamp has whole seconds: start a second back and compare states.
              pollTime(new Date(Date.now() - 1000));
    options.signal?.throwIfAborted();
    if (context.beforeFirstImport) {
      const seeded = await context.beforeFirstImport(context);
      context.log.info({ events: seeded }, "the log's past written before the first import");
    }
    // Stopped meanwhile (a SIGTERM during a first start): the import is not begun.
    options.signal?.throwIfAborted();
    context.log.info({ source }, "first start of capture: importing every entry");
    // One transaction for the whole import and the checkpoints: the projections meet the
    // import as one run of first snapshots, which they build in bulk, and an import cut short
    // leaves nothing for the next start to import a second time. (Its transaction id holds
    // the log's readers back until it commits: nothing else is captured meanwhile anyway.)
    const timings = options.timings ?? importTimings();
    const started = performance.now();
    await client.query("BEGIN");
    let result: CaptureResult;
    try {
      result = await importEntries(context, {
        reason: "import",
        ...options,
        timings,
        transaction: client,
      });
      await writeCaptureCheckpoint(client, source, start);
      await writeCaptureCheckpoint(client, "snapshot", new Date().toISOString());
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    }
    const ms = (value: number) => Math.round(value);
    context.log.info(
      {
        source,
        entries: result.recorded,
        ms: ms(performance.now() - started),
        readMs: ms(timings.read),
        normaliseMs: ms(timings.normalise),
        writeMs: ms(timings.write),
      },
      "import done",
    );
    return true;
  });
}

/**
 * One capture pass of the configured source: the changes since its checkpoint. With
 * `reconcile`, a poll pass is followed by a full reconciliation (`reconcileByPolling`).
 */
export async function captureOnce(
  context: CaptureContext,
  source: CaptureSource,
  options: { reconcile?: boolean; signal?: AbortSignal } = {},
): Promise<CaptureResult> {
  await checkedOnce(context, source);
  await ensureImported(context, source, options.signal ? { signal: options.signal } : {});
  if (source === "accesslog") return captureFromAccesslog(context);
  if (source === "changelog") return captureFromChangelog(context);
  if (source === "ad") return captureFromAD(context);
  const polled = await captureByPolling(context);
  if (!options.reconcile) return polled;
  const reconciled = await reconcileByPolling(context);
  const position = reconciled.position ?? polled.position;
  return { recorded: polled.recorded + reconciled.recorded, ...(position ? { position } : {}) };
}

/** The contexts whose sources were found, once a process (a failed check is made again). */
const checked = new WeakMap<CaptureContext, Promise<void>>();

function checkedOnce(context: CaptureContext, source: CaptureSource): Promise<void> {
  let check = checked.get(context);
  if (!check) {
    check = checkCaptureSources(context, source);
    checked.set(context, check);
    check.catch(() => checked.delete(context));
  }
  return check;
}

export interface FullPassSchedule {
  readonly source: CaptureSource;
  /** Poll and AD: between two full reconciliations, in ms. */
  readonly reconcileInterval: number;
  /** Between two periodic snapshots of every entry, in ms (0: never). */
  readonly snapshotInterval: number;
  /**
   * The projections a periodic snapshot keeps pace with (`paceByProjections`): their names.
   * None: it writes as fast as it reads.
   */
  readonly paceBy?: readonly string[];
}

/**
 * The sources whose passes cannot see every change, so a full reconciliation runs beside them:
 * `poll` (modifyTimestamp shows no delete) and `ad` (an object moved out of the base leaves no
 * tombstone in it, and a delete whose tombstone outlived `tombstoneLifetime` while annal was
 * stopped is gone from CN=Deleted Objects).
 */
const RECONCILED: ReadonlySet<CaptureSource> = new Set(["poll", "ad"]);

/**
 * The passes that read every entry, each when its interval has passed since it last ran:
 * the poll and AD sources' reconciliation, then the periodic snapshot. They take as long as the
 * directory is large, and run beside capture's passes (see `reconcileByPolling` and
 * `importEntries` for why what those record meanwhile is safe). `signal` stops them between
 * pages; one stopped does not note that it ran.
 */
export async function fullPassesIfDue(
  context: CaptureContext,
  schedule: FullPassSchedule,
  signal?: AbortSignal,
): Promise<void> {
  if (
    RECONCILED.has(schedule.source) &&
    (await due(context, "reconcile", schedule.reconcileInterval))
  ) {
    await reconcileByPolling(context, { signal });
    await writeCaptureCheckpoint(context.pool, "reconcile", new Date().toISOString());
  }
  await snapshotIfDue(context, schedule.snapshotInterval, signal, schedule.paceBy);
}

/**
 * Entries a periodic snapshot reads and writes at a time. Smaller than the first import's
 * pages: a change captured during the pass waits for the projections to apply the pages
 * written before it, at most two when the pass is paced (`paceByProjections`). With pages of
 * 500, that was up to a thousand snapshots through every projection, 1.5 s at p99 in the
 * capture benchmark.
 */
const PERIODIC_PAGE_SIZE = 100;

/**
 * Periodic snapshots: when the last one is older than `interval`, a snapshot event for every
 * entry, so that a replay can start from an entry's latest snapshot; paced by the
 * projections named in `paceBy`.
 */
export async function snapshotIfDue(
  context: CaptureContext,
  interval: number,
  signal?: AbortSignal,
  paceBy?: readonly string[],
): Promise<boolean> {
  if (interval <= 0 || !(await due(context, "snapshot", interval))) return false;
  await importEntries(context, {
    reason: "periodic",
    pageSize: PERIODIC_PAGE_SIZE,
    signal,
    ...(paceBy && paceBy.length > 0
      ? { pace: paceByProjections(context.pool, paceBy, { signal }) }
      : {}),
  });
  await writeCaptureCheckpoint(context.pool, "snapshot", new Date().toISOString());
  return true;
}

/** Whether `interval` ms have passed since the checkpoint `name` was last written. */
async function due(
  context: CaptureContext,
  name: "reconcile" | "snapshot",
  interval: number,
): Promise<boolean> {
  const last = await readCaptureCheckpoint(context.pool, name);
  return last === undefined || Date.now() - Date.parse(last) >= interval;
}
