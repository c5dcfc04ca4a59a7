import type { Projection } from "../src/projector/index.ts";
import { changesProjection } from "./changes.ts";
import { entriesProjection } from "./entries.ts";
import { entryVersionsProjection } from "./entry-versions.ts";
import { failedWorkProjection } from "./failed-work.ts";

export { changesProjection, entriesProjection, entryVersionsProjection, failedWorkProjection };

/** Every projection annal runs. */
export const allProjections: readonly Projection[] = [
  entriesProjection,
  entryVersionsProjection,
  changesProjection,
  failedWorkProjection,
];
