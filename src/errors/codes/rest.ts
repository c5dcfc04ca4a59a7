import type { ErrorCodeSpec } from "./spec.ts";

/** The REST channel's own refusals (spec 2). */
export const REST_CODES = {
  ANNAL_PARAMETER_INVALID: {
    status: 400,
    meaning:
      "A query parameter's value cannot be read; `parameter` names it, `expected` says what it takes.",
    surfaces: ["rest"],
  },
  ANNAL_PARAMETER_REPEATED: {
    status: 400,
    meaning: "A query parameter was given more than once.",
    surfaces: ["rest"],
  },
  ANNAL_PARAMETER_UNKNOWN: {
    status: 400,
    meaning:
      "With `Prefer: handling=strict`: a query parameter the route does not take; `unknown` lists them.",
    surfaces: ["rest"],
  },
  ANNAL_PARAMETER_UNSUPPORTED: {
    status: 400,
    meaning:
      "A query parameter this route cannot honour yet, refused whatever `Prefer: handling` says; `parameter` names it.",
    surfaces: ["rest"],
  },
  ANNAL_PARAMETER_CONFLICT: {
    status: 400,
    meaning:
      "Two query parameters that cannot go together (`at` with `during`, `during` with `since` or `range`, `during` with `sort` or `filename`); `parameters` names them.",
    surfaces: ["rest"],
  },
  ANNAL_INTERVAL_INVALID: {
    status: 400,
    meaning:
      "An interval (`during`) does not read: it is `<start>/<end>`, each side a moment, or one side a duration, or `..` for an open side; `parameter` names it.",
    surfaces: ["rest"],
  },
  ANNAL_INTERVAL_REVERSED: {
    status: 400,
    meaning:
      "An interval's start is not before its end (intervals are half-open: `2026-03-01/2026-03-01` holds no moment); `start` and `end` say what was read.",
    surfaces: ["rest"],
  },
  ANNAL_ATTRIBUTES_UNKNOWN: {
    status: 400,
    meaning:
      "With `Prefer: handling=strict`: attribute names the directory does not know (in `filter`, `fields`, `sort` or `affects`); `unknown` lists them.",
    surfaces: ["rest"],
  },
  ANNAL_FILTER_SYNTAX: {
    status: 400,
    meaning: "The filter does not parse; `position` (0-based) and `expected` say where and what.",
    surfaces: ["rest"],
  },
  ANNAL_FILTER_UNSUPPORTED: {
    status: 400,
    meaning:
      "The filter uses a feature annal does not evaluate (LDAP extensible match, SCIM value paths).",
    surfaces: ["rest"],
  },
  ANNAL_FILTER_TOO_COMPLEX: {
    status: 400,
    meaning: "The filter is too long or nested too deeply.",
    surfaces: ["rest"],
  },
  ANNAL_FILTER_SQL_COLUMN: {
    status: 500,
    meaning: "A filter was compiled against a column name annal does not allow (a bug).",
  },
  ANNAL_CURSOR_INVALID: {
    status: 400,
    meaning: "`after` or `before` is not a cursor annal gave, or was altered.",
    surfaces: ["rest"],
  },
  ANNAL_CURSOR_FOREIGN: {
    status: 400,
    meaning: "The cursor comes from another database (or a restored copy of this one).",
    surfaces: ["rest"],
  },
  ANNAL_CURSOR_MISMATCH: {
    status: 400,
    meaning: "The cursor belongs to another query (another type, filter or sort).",
    surfaces: ["rest"],
  },
  ANNAL_PAGINATION_CONFLICT: {
    status: 400,
    meaning: "Pagination parameters that contradict each other (e.g. `first` with `before`).",
    surfaces: ["rest"],
  },
  ANNAL_ID_INVALID: {
    status: 400,
    meaning: "`{id}` is not an entryUUID, a global ID or a DN.",
    surfaces: ["rest"],
  },
  ANNAL_DN_INVALID: {
    status: 400,
    meaning: "A DN does not parse (RFC 4514).",
    surfaces: ["rest"],
  },
  ANNAL_EXPORT_FIELDS_REQUIRED: {
    status: 400,
    meaning: "An export needs an explicit `fields` list; `*` and `+` are refused.",
    surfaces: ["rest"],
  },
  ANNAL_EXPORT_FORMAT_UNKNOWN: {
    status: 400,
    meaning: "`filename`'s extension names no export format.",
    surfaces: ["rest"],
  },
  ANNAL_EXPORT_OPTIONS_INVALID: {
    status: 400,
    meaning: "`export` is not a JSON object of the format's options; `options` lists them.",
    surfaces: ["rest"],
  },
  ANNAL_EXPORT_TOO_LARGE: {
    status: 400,
    meaning: "The export would hold more rows than allowed.",
    surfaces: ["rest"],
  },
  ANNAL_FILENAME_INVALID: {
    status: 400,
    meaning: "`filename` holds a path, quotes or control characters.",
    surfaces: ["rest"],
  },
  ANNAL_EXPORT_BUSY: {
    status: 429,
    meaning: "Too many exports are streaming from this process; retry after `Retry-After` seconds.",
    surfaces: ["rest"],
  },
  ANNAL_TYPE_UNKNOWN: {
    status: 404,
    meaning: "No entry type is served at this path.",
    surfaces: ["rest"],
  },
  ANNAL_TYPE_NAME_COLLISION: {
    status: 500,
    meaning: "Two configured entry types would be served under the same name.",
    hint: "give one of the types another name in [[directory.types]]",
    surfaces: ["startup"],
  },
  ANNAL_ENTRY_NOT_FOUND: {
    status: 404,
    meaning:
      "No such entry; `reason` says why: `unknown`, `not-yet` (did not exist at `at`), `deleted` (with `since`), `other-type`.",
    surfaces: ["rest"],
  },
  ANNAL_HISTORY_BUILDING: {
    status: 503,
    meaning:
      "The entry is not in the history yet, and annal cannot say it does not exist, or a search would answer a page without the directory's entries: the first import of the directory (a first start), or its projection, is still under way. Answered with `Retry-After`. On `/readyz`: capture's first import is not recorded yet (so nothing is captured), or not yet in the entries' projection (so a search would not find it).",
    hint: "ask again after Retry-After seconds; the first start's import of the directory is still being recorded",
    surfaces: ["rest", "readyz"],
  },
  ANNAL_DURATION_INVALID: {
    status: 400,
    meaning: "A duration does not parse (e.g. `500ms`, `2s`, `5m`, `1h`, `1d`).",
  },
} as const satisfies Record<string, ErrorCodeSpec>;
