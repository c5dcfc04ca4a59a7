/**
 * The internal query API over the history projections (`entries`, `entry_versions`,
 * `changes`): an entry now or at a moment, one entry's changes, the change feed, the entries
 * that matched a filter during a period and an entry's group memberships over one. The REST
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
export {
  countMatchedDuring,
  matchedDuring,
  type MatchedEntry,
  type Period,
  type Span,
} from "./during.ts";
export { membershipsDuring, type Membership, type MembershipSpan } from "./memberships.ts";
export { versionsAt, versionTypes, type VersionsAtQuery } from "./versions-at.ts";

export { directoryAt, type DirectoryAt } from "./directory-at.ts";
export { EntryNotFoundError, HistoryBuildingError, type EntryAbsence } from "./errors.ts";
export { holdsDirectory, holdsDirectoryAt } from "./complete.ts";
export { globalId, parseGlobalId, UUID } from "./global-id.ts";
export { CAUSE_COLUMNS, CAUSE_JOIN, causeOf, type CauseRow } from "./cause.ts";
