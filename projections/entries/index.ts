export { entriesProjection } from "./projection.ts";
export { ENTRIES, ENTRIES_PROJECTION, type EntriesRow } from "./tables.ts";
