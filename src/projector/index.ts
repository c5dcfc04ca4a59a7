export {
  Projector,
  ProjectionTimeoutError,
  projectionStatus,
  waitForProjection,
} from "./projector.ts";
export type { ProjectorOptions } from "./projector.ts";
export { rebuildProjection as replayProjection } from "./rebuild.ts";
export type { RebuildOptions } from "./rebuild.ts";
export { schemaNames, tableIn } from "./schema.ts";
export type { Projection, ProjectionContext, ProjectionStatus } from "./types.ts";
