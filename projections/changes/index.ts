export { changesProjection } from "./projection.ts";
export { CHANGES, CHANGES_PROJECTION, type ChangesRow } from "./tables.ts";
