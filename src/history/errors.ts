import { AnnalError } from "../errors/index.ts";

/** Why an entry could not be shown: never known, not yet there, deleted, or of another type. */
export type EntryAbsence = "unknown" | "not-yet" | "deleted" | "other-type";

/**
 * No entry answers the ID (at the moment asked for). `reason` says why, and `since` when it
 * helps: the moment of the deletion, or when the entry first appeared.
 */
export class EntryNotFoundError extends AnnalError {
  readonly reason: EntryAbsence;
  readonly since: Date | undefined;

  constructor(
    id: string,
    reason: EntryAbsence,
    details: { at?: Date; since?: Date; type?: string; actualType?: string | null } = {},
  ) {
    const at = details.at ? ` at ${details.at.toISOString()}` : "";
    const message = {
      unknown: `no entry ${id} is known${details.type ? ` among the ${details.type} entries` : ""}`,
      "not-yet": `entry ${id} did not exist yet${at}; it first appears at ${details.since?.toISOString()}`,
      deleted: `entry ${id} had been deleted${at}; it was deleted at ${details.since?.toISOString()}`,
      "other-type": `entry ${id} is ${details.actualType ? `of type "${details.actualType}"` : "of no configured type"}${at}, not "${details.type}"`,
    }[reason];
    const hint = {
      unknown: "check the ID: an entryUUID, a URL-encoded DN, or a global ID from a search",
      "not-yet": "ask for a later moment, or leave out `at` for the entry as it is now",
      deleted: "ask for an earlier moment with `at`; its changes stay readable under /changes",
      "other-type": details.actualType
        ? `read it under its own type's path`
        : "entries of no configured type are not served",
    }[reason];
    super("ANNAL_ENTRY_NOT_FOUND", message, {
      hint,
      details: {
        reason,
        ...(details.since === undefined ? {} : { since: details.since.toISOString() }),
      },
    });
    this.reason = reason;
    this.since = details.since;
  }
}

/** Seconds a client waits before asking again while the history is being built. */
const BUILDING_RETRY_AFTER_SECONDS = 5;

/**
 * No entry answers the ID yet, and none can be said not to exist: capture's first import (a
 * first start), or its projection, is still under way, so an entry the directory has (one a
 * GraphQL search, which reads the directory meanwhile, has just found) may not be in the
 * history yet. A 503 with `Retry-After`, never "unknown".
 */
export class HistoryBuildingError extends AnnalError {
  /**
   * `search`: a search of that type's entries, which would answer a page of what the history
   * holds so far (none of the directory, or only a seeded past) as if it were the directory.
   */
  constructor(id: string, details: { at?: Date; search?: boolean } = {}) {
    const moment = details.at ? ` at ${details.at.toISOString()}` : "";
    super(
      "ANNAL_HISTORY_BUILDING",
      details.search
        ? `the ${id} cannot be searched yet: annal's first import of the directory is still being recorded, and a page now would leave out entries the directory has${moment}`
        : `entry ${id} is not in the history yet: annal's first import of the directory is still being recorded, so it cannot say whether the entry exists${moment}`,
      {
        headers: { "retry-after": String(BUILDING_RETRY_AFTER_SECONDS) },
        details: { retryAfter: BUILDING_RETRY_AFTER_SECONDS },
      },
    );
  }
}
