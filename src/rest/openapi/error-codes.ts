/**
 * Every code the REST channel answers with, its status and what it means: the one list the
 * OpenAPI description documents (and a test holds the code to).
 */
export const REST_ERROR_CODES: Readonly<Record<string, { status: number; meaning: string }>> = {
  ANNAL_BAD_REQUEST: { status: 400, meaning: "The request is malformed (e.g. its URL)." },
  ANNAL_PARAMETER_INVALID: {
    status: 400,
    meaning:
      "A query parameter's value cannot be read; `parameter` names it, `expected` says what it takes.",
  },
  ANNAL_PARAMETER_REPEATED: { status: 400, meaning: "A query parameter was given more than once." },
  ANNAL_PARAMETER_UNKNOWN: {
    status: 400,
    meaning:
      "With `Prefer: handling=strict`: a query parameter the route does not take; `unknown` lists them.",
  },
  ANNAL_ATTRIBUTES_UNKNOWN: {
    status: 400,
    meaning:
      "With `Prefer: handling=strict`: attribute names the directory does not know (in `filter`, `fields`, `sort` or `affects`); `unknown` lists them.",
  },
  ANNAL_FILTER_SYNTAX: {
    status: 400,
    meaning: "The filter does not parse; `position` (0-based) and `expected` say where and what.",
  },
  ANNAL_FILTER_UNSUPPORTED: {
    status: 400,
    meaning:
      "The filter uses a feature annal does not evaluate (LDAP extensible match, SCIM value paths).",
  },
  ANNAL_FILTER_TOO_COMPLEX: {
    status: 400,
    meaning: "The filter is too long or nested too deeply.",
  },
  ANNAL_CURSOR_INVALID: {
    status: 400,
    meaning: "`after` or `before` is not a cursor annal gave, or was altered.",
  },
  ANNAL_CURSOR_FOREIGN: {
    status: 400,
    meaning: "The cursor comes from another database (or a restored copy of this one).",
  },
  ANNAL_CURSOR_MISMATCH: {
    status: 400,
    meaning: "The cursor belongs to another query (another type, filter or sort).",
  },
  ANNAL_PAGINATION_CONFLICT: {
    status: 400,
    meaning: "Pagination parameters that contradict each other (e.g. `first` with `before`).",
  },
  ANNAL_ID_INVALID: { status: 400, meaning: "`{id}` is not an entryUUID, a global ID or a DN." },
  ANNAL_DN_INVALID: {
    status: 400,
    meaning: "`{id}` looks like a DN but does not parse (RFC 4514).",
  },
  ANNAL_EXPORT_FIELDS_REQUIRED: {
    status: 400,
    meaning: "An export needs an explicit `fields` list; `*` and `+` are refused.",
  },
  ANNAL_EXPORT_FORMAT_UNKNOWN: {
    status: 400,
    meaning: "`filename`'s extension names no export format.",
  },
  ANNAL_EXPORT_OPTIONS_INVALID: {
    status: 400,
    meaning: "`export` is not a JSON object of the format's options; `options` lists them.",
  },
  ANNAL_EXPORT_TOO_LARGE: { status: 400, meaning: "The export would hold more rows than allowed." },
  ANNAL_FILENAME_INVALID: {
    status: 400,
    meaning: "`filename` holds a path, quotes or control characters.",
  },
  ANNAL_UNAUTHENTICATED: {
    status: 401,
    meaning:
      "No bearer token, or one that is unknown, revoked or malformed (see `WWW-Authenticate`).",
  },
  ANNAL_FORBIDDEN: {
    status: 403,
    meaning: "The account lacks the access function needed: `read`, or `export` for exports.",
  },
  ANNAL_NOT_FOUND: { status: 404, meaning: "No such route." },
  ANNAL_TYPE_UNKNOWN: { status: 404, meaning: "No entry type is served at this path." },
  ANNAL_ENTRY_NOT_FOUND: {
    status: 404,
    meaning:
      "No such entry; `reason` says why: `unknown`, `not-yet` (did not exist at `at`), `deleted` (with `since`), `other-type`.",
  },
  ANNAL_NOT_ACCEPTABLE: {
    status: 406,
    meaning: "`/api` cannot answer in any type the `Accept` header allows.",
  },
  ANNAL_URI_TOO_LONG: { status: 414, meaning: "The URL is longer than annal accepts." },
  ANNAL_EXPORT_BUSY: {
    status: 429,
    meaning: "Too many exports are streaming from this process; retry after `Retry-After` seconds.",
  },
  ANNAL_DATABASE_UNREACHABLE: {
    status: 503,
    meaning: "The database does not answer; retry later.",
  },
};
