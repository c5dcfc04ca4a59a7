export { entryVersionsProjection } from "./projection.ts";
export {
  ENTRY_VERSIONS,
  ENTRY_VERSION_VALUES,
  ENTRY_VERSIONS_PROJECTION,
  type EntryVersionsRow,
} from "./tables.ts";
export { versionValueRows } from "./values.ts";
