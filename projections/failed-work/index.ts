export { failedWorkProjection } from "./projection.ts";
export {
  FAILED_WORK,
  FAILED_WORK_PROJECTION,
  FAILED_WORK_STATES,
  type FailedWorkRow,
  type FailedWorkState,
} from "./tables.ts";
