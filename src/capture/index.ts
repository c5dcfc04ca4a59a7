/**
 * Change capture: every change of the directory as an event on the entry's stream (keyed by
 * entryUUID), from slapd's accesslog or by polling any LDAPv3 server, with snapshots of every
 * entry at the first start and periodically.
 */
export { captureFromAccesslog, accesslogHead } from "./from-accesslog.ts";
export { formatGeneralizedTime, parseGeneralizedTime } from "./accesslog.ts";
export { captureByPolling, reconcileByPolling } from "./from-polling.ts";
export { captureFromAD } from "./from-ad.ts";
export { importEntries, importTimings, countEntries } from "./import.ts";
export { paceByProjections } from "./pace.ts";
export type { ImportOptions, ImportResult, ImportTimings } from "./import.ts";
export {
  captureOnce,
  createNormalizer,
  ensureImported,
  fullPassesIfDue,
  snapshotIfDue,
} from "./service.ts";
export type { CaptureSource, FullPassSchedule } from "./service.ts";
export type { CaptureContext, CaptureResult } from "./context.ts";
export { readCaptureCheckpoint } from "./checkpoints.ts";
export { CAPTURE_LOCK_APPLICATION, retireCaptureQueue, startCaptureWorker } from "./worker.ts";
export type { CaptureSchedule, CaptureWorker } from "./worker.ts";
export {
  causedWrites,
  claimWriteIntent,
  recordWriteIntent,
  withdrawnIfRefused,
  writeFingerprint,
  type WriteIntent,
} from "./intents.ts";
export type { WriteCause } from "./intents.ts";
export { valuesDigest } from "./intents.ts";
export { readStoredText, storableText } from "./stored-value.ts";
export { changeBetween } from "./changes.ts";
export { entryState, stateIdentity } from "./normalize.ts";
export {
  FAILING_AFTER_PASSES,
  readCaptureStatus,
  recordPassFailed,
  recordPassSucceeded,
  type CaptureStatus,
} from "./status.ts";
