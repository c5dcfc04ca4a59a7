/**
 * The internal query API over the history projections (`entries`, `entry_versions`,
 * `changes`): an entry now or at a moment, one entry's changes, the change feed. The REST
 * channel reads through it; GraphQL may too. It never reads the directory itself.
 */
export {
  currentEntry,
  entryAt,
  entryUUIDForDn,
  lastVersion,
  type EntryAtResult,
  type EntryRecord,
} from "./entries.ts";
export {
  changeFeed,
  changesOf,
  countChanges,
  type ChangeFilter,
  type ChangePage,
  type ChangePageResult,
  type ChangeRecord,
} from "./changes.ts";
export type { ChangeCause } from "./cause.ts";
export { EntryNotFoundError, type EntryAbsence } from "./errors.ts";
export { globalId, parseGlobalId, UUID } from "./global-id.ts";
