/**
 * The projections: one folder each, owning its tables, their row types, its version and how it
 * applies events. Readers (`src/history/`, `src/rest/search/`, failed work) import a
 * projection's table names and row types from its folder instead of deriving them.
 */
import type { AnyProjection } from "../src/projector/index.ts";
import { accessProjection } from "./access/index.ts";
import { changesProjection } from "./changes/index.ts";
import { entriesProjection } from "./entries/index.ts";
import { entryVersionsProjection } from "./entry-versions/index.ts";
import { failedWorkProjection } from "./failed-work/index.ts";
import { reviewsProjection } from "./reviews/index.ts";
import { workflowsProjection } from "./workflows/index.ts";

export {
  accessProjection,
  changesProjection,
  entriesProjection,
  entryVersionsProjection,
  failedWorkProjection,
  reviewsProjection,
  workflowsProjection,
};

/** Every projection annal runs. */
export const allProjections: readonly AnyProjection[] = [
  entriesProjection,
  entryVersionsProjection,
  changesProjection,
  failedWorkProjection,
  workflowsProjection,
  accessProjection,
  reviewsProjection,
];
