/**
 * The projector and the projections, imported here and nowhere else in `src/app/` and
 * `src/cli/`, so that wiring them is one file.
 */
import { allProjections as projections } from "../../projections/index.ts";
import type { AnnalConfig } from "../config/index.ts";
import type { AnyProjection } from "../projector/index.ts";

export {
  Projector,
  projectionStatus,
  replayProjection,
  type Projection,
  type ProjectionStatus,
} from "../projector/index.ts";

/**
 * The projections this process runs. It takes the configuration so that projections that
 * depend on it can join without changing the callers; today every one runs always.
 */
export function allProjections(_config: AnnalConfig): readonly AnyProjection[] {
  return projections;
}
