export {
  Projector,
  ProjectionTimeoutError,
  projectionStatus,
  waitForProjection,
} from "./projector.ts";
export type { ProjectorOptions } from "./projector.ts";
export { lockProjection } from "./apply-batch.ts";
export { rebuildProjection as replayProjection, replayInto } from "./rebuild.ts";
export type { RebuildOptions } from "./rebuild.ts";
export { copyRows } from "./replay-copy.ts";
export { liveTable, readCheckpoint, readCheckpointOnPool, schemaNames, tableIn } from "./schema.ts";
export type {
  AnyProjection,
  FirstSnapshots,
  Projection,
  ProjectionContext,
  ProjectionStatus,
  ReplayPlan,
  ReplayRows,
  ReplayTable,
} from "./types.ts";
