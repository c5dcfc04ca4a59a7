import type { ErrorCodeSpec } from "./spec.ts";

/** Driving a running annal from the terminal: `annal refresh`, `annal graphql`, `annal inventory`. */
export const SCENARIO_CODES = {
  ANNAL_UNKNOWN_SCENARIO: {
    status: 400,
    meaning: "`annal refresh` was given a scenario it does not know; the message lists them.",
    hint: "annal refresh --help lists the scenarios and what each sends",
  },
  ANNAL_SOURCE_CHANGE_FAILED: {
    status: 502,
    meaning:
      "A change event `annal refresh` sent was accepted, and its processing failed for good (it is under failed work).",
    hint: "annal failed-work list shows it with its error; annal failed-work retry <id> tries again",
  },
  ANNAL_SOURCE_CHANGE_TIMEOUT: {
    status: 504,
    meaning:
      "A change event `annal refresh` sent was accepted but not processed within `--timeout` (it may still be retrying).",
    hint: "annal logs says what its provider does; a longer --timeout waits more",
  },
  ANNAL_UNKNOWN_FIXTURE_ACCOUNT: {
    status: 400,
    meaning: "`--as` names no person of the demo directory, so no one to sign in as.",
    hint: "name a demo person by login (uid), e.g. --as prossi; every demo person's password is demo",
  },
  ANNAL_LOGIN_FAILED: {
    status: 401,
    meaning:
      "Signing in through annal's sign-in page (the demo's OpenID provider) did not end with a session.",
    hint: "the account may be disabled (a leaver), or annal may run without the demo's [auth.oidc]",
  },
  ANNAL_QUERY_FAILED: {
    status: 502,
    meaning:
      "The GraphQL API refused the request or answered it with errors; the message gives their codes.",
  },
  ANNAL_INVENTORY_AMBIGUOUS: {
    status: 409,
    meaning:
      "`annal inventory <name>` asked for the bundle of a workflow that runs in more than one stored version (the current one and an older one with live instances).",
    hint: "name the version: annal inventory <name>@<version>",
  },
  ANNAL_BUNDLE_HASH_MISSING: {
    status: 500,
    meaning: "A stored workflow definition has no bundle hash (its deploy event lacks one).",
    hint: "deploy it again under a new version: the hash names the code its instances run",
  },
  ANNAL_WORKFLOW_NOT_DEPLOYED: {
    status: 404,
    meaning: "`annal inventory <name>` names no stored workflow definition (or no such version).",
    hint: "annal inventory lists the stored definitions",
  },
} as const satisfies Record<string, ErrorCodeSpec>;
