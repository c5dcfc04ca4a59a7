/** Composition and lifecycle: what `annal start` runs, in what order, and how it stops. */
export {
  startAnnal,
  prepareEventStore,
  type RunningAnnal,
  type StartAnnalOptions,
} from "./start.ts";
export { openDatabase, maskDatabaseUrl, type OpenDatabase } from "./database.ts";
export { EmbeddedDatabaseInUseError } from "./embedded-lock.ts";
export { ANNAL_PARTS, isAnnalPart, type AnnalPart } from "./parts.ts";
export { shutdownSignal, type ShutdownSignal } from "./signals.ts";
export { allProjections, replayProjection, type Projection } from "./projections.ts";
export { checkConfiguration, type CheckedConfiguration } from "./preflight.ts";
export { startDirectory, type RunningDirectory } from "./directory.ts";
export { retainLog, retentionHorizon, type RetainLogOptions } from "./retention.ts";
export { eraseFromLog, type EraseFromLogOptions } from "./erasure.ts";
