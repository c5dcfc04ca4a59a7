/**
 * The projector and the projections, imported here and nowhere else in `src/app/` and
 * `src/cli/`, so that wiring them is one file.
 */
import { allProjections as projections, entriesProjection } from "../../projections/index.ts";
import { withSortPairs, type SortPair } from "../../projections/entries/index.ts";
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
 * The projections this process runs, every one always; the `entries` projection with an index
 * for each configured sort pair (`[[directory.types]] sortPairs`).
 */
export function allProjections(config: AnnalConfig): readonly AnyProjection[] {
  const pairs = sortPairsOf(config);
  if (pairs.length === 0) return projections;
  return projections.map((projection) =>
    projection === entriesProjection ? withSortPairs(entriesProjection, pairs) : projection,
  );
}

/** Every type's configured sort pairs. */
function sortPairsOf(config: AnnalConfig): SortPair[] {
  return (config.directory?.types ?? []).flatMap((type) =>
    (type.sortPairs ?? []).map(([first, second]) => ({
      type: type.name,
      first: first!,
      second: second!,
    })),
  );
}
