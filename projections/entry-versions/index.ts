export { entryVersionsProjection } from "./projection.ts";
export {
  ENTRY_VERSIONS,
  ENTRY_VERSION_VALUES,
  ENTRY_VERSIONS_PROJECTION,
  type EntryVersionsRow,
} from "./tables.ts";
export { VALUE_SPAN_COLUMNS, valueSpanRows } from "./values.ts";
