export { entryVersionsProjection } from "./projection.ts";
export { ENTRY_VERSIONS, ENTRY_VERSIONS_PROJECTION, type EntryVersionsRow } from "./tables.ts";
