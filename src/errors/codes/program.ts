import type { ErrorCodeSpec } from "./spec.ts";

/** The program itself: its configuration, start-up, command line and local services. */
export const PROGRAM_CODES = {
  ANNAL_USAGE: {
    status: 400,
    meaning: "A command was called with arguments it does not take.",
    hint: "annal help <command> shows what it takes",
  },
  ANNAL_FILE_UNREADABLE: {
    status: 400,
    meaning: "A file named on the command line cannot be read.",
  },
  ANNAL_CONFIG_NOT_FOUND: {
    status: 500,
    meaning: "The configuration file named (by --config or ANNAL_CONFIG) does not exist.",
    surfaces: ["startup"],
  },
  ANNAL_CONFIG_UNREADABLE: {
    status: 500,
    meaning: "The configuration file cannot be read.",
    surfaces: ["startup"],
  },
  ANNAL_CONFIG_SYNTAX: {
    status: 500,
    meaning: "The configuration file is not valid TOML; the message names line and column.",
    surfaces: ["startup"],
  },
  ANNAL_CONFIG_ENV_MISSING: {
    status: 500,
    meaning: "A `${VARIABLE}` reference in the configuration names an unset variable.",
    surfaces: ["startup"],
  },
  ANNAL_CONFIG_SECRET_LITERAL: {
    status: 500,
    meaning:
      "The configuration holds a secret (a password, a client secret) as a literal; use a `${VARIABLE}` reference.",
    surfaces: ["startup"],
  },
  ANNAL_CONFIG_UNKNOWN_KEY: {
    status: 500,
    meaning: "The configuration has a key annal does not know (a misspelling?).",
    surfaces: ["startup"],
  },
  ANNAL_CONFIG_INVALID: {
    status: 500,
    meaning: "A configuration value is not what its key takes; the message names the key.",
    surfaces: ["startup"],
  },
  WF_DATABASE_MIGRATION_MISMATCH: {
    status: 503,
    meaning:
      "The database records a migration this program does not know (a newer or incompatible program migrated it), or its migration history has a gap; the message names the recorded key and the newest known key.",
    hint: "start the program version that migrated the database, or restore a backup from before the upgrade",
    surfaces: ["startup", "readyz"],
  },
  ANNAL_NODE_VERSION_MISMATCH: {
    status: 500,
    meaning: "annal runs on a Node.js older than it needs.",
    surfaces: ["startup"],
  },
  ANNAL_ALREADY_RUNNING: {
    status: 409,
    meaning: "Another annal already runs on this data directory.",
    surfaces: ["startup"],
  },
  ANNAL_PORT_IN_USE: {
    status: 500,
    meaning: "Another process listens on annal's port.",
    hint: "choose another port with PORT or server.port",
    surfaces: ["startup"],
  },
  ANNAL_PORT_DENIED: {
    status: 500,
    meaning: "annal may not listen on its port (permission denied).",
    hint: "choose another port with PORT or server.port",
    surfaces: ["startup"],
  },
  ANNAL_POSTGRES_VERSION_TOO_OLD: {
    status: 500,
    meaning: "The PostgreSQL server is older than the oldest version annal supports.",
    surfaces: ["startup"],
  },
  ANNAL_NOT_RUNNING: {
    status: 404,
    meaning:
      "`annal stop` or `annal logs` found no annal started from this directory (no pid file in its data directory, or its process is gone).",
    hint: "annal start runs one here; annal status lists every process attached to the database",
  },
  ANNAL_STOP_TIMEOUT: {
    status: 500,
    meaning: "The annal asked to stop (SIGTERM) was still running after the grace period.",
  },
  ANNAL_EMBEDDED_POSTGRES_FAILED: {
    status: 500,
    meaning: "The embedded PostgreSQL did not start.",
    surfaces: ["startup"],
  },
  ANNAL_EMBEDDED_POSTGRES_IN_USE: {
    status: 500,
    meaning: "The embedded PostgreSQL's data directory belongs to a running annal.",
    surfaces: ["startup"],
  },
  ANNAL_PUBLICATION_FAILED: {
    status: 500,
    meaning:
      "annal cannot create the publication of the event log that `[events] publication` names: its database user lacks the right.",
    hint: "let a superuser create the publication (docs/publication.md), or grant annal's user the right",
    surfaces: ["startup"],
  },
  ANNAL_SLAPD_NOT_INSTALLED: {
    status: 500,
    meaning: "OpenLDAP's slapd is not installed, so there is no demo directory.",
    hint: "apt-get install slapd ldap-utils",
  },
  ANNAL_SLAPD_START_FAILED: { status: 500, meaning: "The private slapd did not start." },
  ANNAL_SLAPD_SEED_FAILED: { status: 500, meaning: "slapadd could not load the demo's seed LDIF." },
  ANNAL_UNKNOWN_PROJECTION: { status: 400, meaning: "`annal replay` names no projection." },
  ANNAL_COMMIT_UNKNOWN: {
    status: 500,
    meaning: "The source commit is unknown (not a git checkout, no COMMIT file, no ANNAL_COMMIT).",
  },
  ANNAL_COMMIT_INVALID: {
    status: 500,
    meaning: "ANNAL_COMMIT or the COMMIT file does not hold a 40-character commit id.",
  },
  ANNAL_DOCS_STALE: {
    status: 500,
    meaning: "A document generated from the code (docs/*.md) is not what the code now writes.",
  },
  ANNAL_ACCOUNT_NOT_FOUND: {
    status: 404,
    meaning: "No active service account has this name.",
    hint: "`annal token list` shows the accounts",
  },
  ANNAL_ACCOUNT_NAME_INVALID: { status: 400, meaning: "An account name is not valid." },
  ANNAL_ACCESS_UNKNOWN: { status: 400, meaning: "An access function annal does not know." },
  ANNAL_ACCESS_EMPTY: {
    status: 400,
    meaning: "The change would leave the account with no access (revoking is its own command).",
  },
} as const satisfies Record<string, ErrorCodeSpec>;
