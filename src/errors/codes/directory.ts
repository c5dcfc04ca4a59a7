import type { ErrorCodeSpec } from "./spec.ts";

/** Talking to the directory (LDAP result codes as annal reports them) and capturing it. */
export const DIRECTORY_CODES = {
  ANNAL_DIRECTORY_NOT_CONFIGURED: {
    status: 503,
    meaning: "The action reads or writes the directory, and annal has none configured.",
    hint: "configure [directory] in annal.toml (url, bindDN, password, base)",
  },
  ANNAL_DIRECTORY_UNAVAILABLE: {
    status: 503,
    meaning: "The directory could not be reached.",
    hint: "check [directory] url, bindDN and the password's environment variable",
  },
  ANNAL_DIRECTORY_SCHEMA_EMPTY: {
    status: 502,
    meaning:
      "Reading the directory's schema found no attribute types: the entry the root DSE names in subschemaSubentry (cn=Subschema where it names none) is missing, or shows annal's bind DN none of them.",
    hint: "let annal's bind DN read the root DSE's subschemaSubentry and the attributeTypes and objectClasses of the entry it names",
  },
  ANNAL_LDAP_BIND_FAILED: {
    status: 502,
    meaning: "The directory refused annal's own bind (DN or password).",
    hint: "check [directory] bindDN and the password's environment variable",
  },
  ANNAL_LDAP_TLS_FAILED: {
    status: 502,
    meaning:
      "TLS with the directory could not be set up: its certificate did not verify (the message says what did not match: the name, the CA that issued it, its dates), the handshake was cut off, the directory refused StartTLS, or a file of [directory.tls] could not be used.",
    hint: "the message's hint names the [directory.tls] setting to change",
  },
  ANNAL_LDAP_CLOSED: { status: 503, meaning: "The connection pool to the directory is closed." },
  ANNAL_LDAP_TIMEOUT: { status: 504, meaning: "The directory did not answer in time." },
  ANNAL_LDAP_LIMIT_EXCEEDED: {
    status: 422,
    meaning: "A size or administrative limit of the directory was exceeded.",
    hint: "narrow the filter or page the search",
  },
  ANNAL_LDAP_CONTROL_UNSUPPORTED: {
    status: 502,
    meaning: "The directory does not support a control annal sent.",
  },
  ANNAL_LDAP_VALUE_CONFLICT: {
    status: 409,
    meaning: "The entry already has the value added, or lacks the value removed.",
  },
  ANNAL_LDAP_SCHEMA_VIOLATION: {
    status: 422,
    meaning: "The directory's schema does not allow the change.",
    hint: "the message names the attribute or object class at fault",
  },
  ANNAL_LDAP_NO_SUCH_OBJECT: {
    status: 404,
    meaning: "There is no such entry in the directory.",
    hint: "check the DN; the entry or one of its parents does not exist",
  },
  ANNAL_LDAP_INVALID_DN: { status: 400, meaning: "The directory rejected the DN's syntax." },
  ANNAL_LDAP_INSUFFICIENT_ACCESS: { status: 403, meaning: "The directory denied access." },
  ANNAL_LDAP_PROXY_DENIED: {
    status: 403,
    meaning:
      "The directory does not let annal act as the requesting identity (proxied authorization).",
  },
  ANNAL_LDAP_UNAVAILABLE: {
    status: 503,
    meaning: "The directory is busy or unavailable.",
    hint: "retry shortly",
  },
  ANNAL_LDAP_UNWILLING: {
    status: 422,
    meaning: "The directory is unwilling to perform the operation.",
  },
  ANNAL_LDAP_NOT_A_LEAF: {
    status: 409,
    meaning: "The entry has children.",
    hint: "move or delete its children first",
  },
  ANNAL_LDAP_ALREADY_EXISTS: { status: 409, meaning: "An entry with that DN already exists." },
  ANNAL_LDAP_OPERATION_FAILED: {
    status: 502,
    meaning: "The directory refused the operation for another reason; the message names it.",
  },
  ANNAL_FILTER_ATTRIBUTE_INVALID: {
    status: 400,
    meaning: "An attribute name in an LDAP filter is not a valid attribute description.",
  },
  ANNAL_FILTER_VALUE_INVALID: {
    status: 400,
    meaning: "A value in an LDAP filter cannot be encoded.",
  },
  ANNAL_CAPTURE_FAILING: {
    status: 503,
    meaning: "Directory change capture has failed pass after pass; capture.lastError says why.",
    surfaces: ["readyz"],
  },
  ANNAL_DIRECTORY_BASE_MISSING: {
    status: 503,
    meaning:
      "The configured directory base is not there for annal's bind: the entry is missing, or hidden from the bind by the directory's access rules.",
    hint: "check [directory] base, and that the bind DN may read that entry and what is under it",
    surfaces: ["readyz"],
  },
  ANNAL_DIRECTORY_BASE_EMPTY: {
    status: 503,
    meaning:
      "The import found nothing under the configured directory base but the base's own entry: the base is not where the entries are, or the directory hides them from annal's bind; a history of no entries would pass for the directory's. Capture imports at its next pass once an entry is there.",
    hint: "check [directory] base, and that the bind DN may read the entries under it (its access rules, and size or look-through limits); a directory that is still empty: add its first entry",
    surfaces: ["readyz"],
  },
  ANNAL_CAPTURE_SOURCE_MISSING: {
    status: 503,
    meaning:
      'The configured change source is not in the directory (source = "accesslog" and no cn=accesslog, "changelog" and no cn=changelog, that the bind can read; "ad" and a server that is no Active Directory DC, or a bind that cannot read its CN=Deleted Objects), so capture would capture nothing.',
    hint: 'enable the change log and let annal\'s bind read it (OpenLDAP: the accesslog overlay with its database at cn=accesslog; 389 Directory Server: the Retro Changelog), as docs/connect-your-directory.md shows, or set [directory.capture] source = "poll"',
    surfaces: ["readyz"],
  },
  ANNAL_IMPORT_STORED_NOTHING: {
    status: 503,
    meaning:
      "The import read entries from the directory and could store none of them: no entry had an identity annal can use (entryUUID, nsUniqueId or objectGUID).",
    hint: "read the ANNAL_ENTRY_WITHOUT_IDENTITY warnings in the log: enable the server's entryUUID support, or let annal's bind read the identity attribute",
    surfaces: ["readyz"],
  },
  ANNAL_SORT_PAIR_MISNAMED: {
    status: 500,
    meaning:
      "A `[[directory.types]] sortPairs` attribute is not a user attribute of the directory's schema as the schema spells it (`givenname` where the schema says `givenName`, an alias such as `commonName` for `cn`, an unknown or operational attribute): no sort would ever read its index.",
    hint: "name each attribute of the pair as the directory's schema spells it; the message names the spelling it has",
    surfaces: ["startup"],
  },
  ANNAL_ENTRY_WITHOUT_IDENTITY: {
    status: 503,
    meaning:
      "Entries read from the directory had no identity annal can use (entryUUID, nsUniqueId or objectGUID) and could not be recorded; counted in annal_capture_entries_without_identity_total.",
    hint: "enable the server's entryUUID support (389 Directory Server: the entryUUID plugin and its fixup task), or let annal's bind read the identity attribute",
  },
  ANNAL_CAPTURE_NOT_IMPORTED: {
    status: 503,
    meaning:
      "Change capture has no checkpoint to go on from: the directory was never imported into the log.",
    hint: "run annal import, or start annal, which imports the directory at its first start",
  },
  ANNAL_CAPTURE_PASS_FAILED: {
    status: 503,
    meaning: "One pass of change capture failed; the next pass tries again.",
  },
  ANNAL_CAPTURE_CHANGE_REFUSED: {
    status: 500,
    meaning:
      "PostgreSQL refused the event of one directory change; it is noted as DirectoryChangeNotRecorded and capture goes on.",
  },
  ANNAL_CAPTURE_CHANGE_UNREADABLE: {
    status: 500,
    meaning:
      "A directory change could not be read into an event; it is noted as DirectoryChangeNotRecorded and capture goes on.",
  },
} as const satisfies Record<string, ErrorCodeSpec>;
