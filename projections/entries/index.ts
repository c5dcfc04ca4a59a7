export { entriesProjection } from "./projection.ts";
export {
  ENTRIES,
  ENTRIES_PROJECTION,
  ENTRY_ROW_ATTRIBUTE,
  ENTRY_VALUES,
  ENTRY_VALUE_COUNTS,
  VALUE_KEY_LENGTH,
  parentDnSql,
  type EntriesRow,
} from "./tables.ts";
export { indexEntryValues, insertEntryValues } from "./values.ts";
export {
  sortPairIndex,
  sortPairIndexName,
  sortValueSql,
  withSortPairs,
  type SortPair,
} from "./sort-pairs.ts";
