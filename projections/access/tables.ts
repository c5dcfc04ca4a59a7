import { liveTable } from "../../src/projector/index.ts";

export const ACCESS_PROJECTION = "access";

/** The live tables, quoted and schema-qualified (never user input). */
export const ACCESS_TABLES = {
  accounts: liveTable(ACCESS_PROJECTION, "accounts"),
  principalSets: liveTable(ACCESS_PROJECTION, "principal_sets"),
  serviceAccess: liveTable(ACCESS_PROJECTION, "service_access"),
  activations: liveTable(ACCESS_PROJECTION, "activations"),
} as const;

/**
 * Every table keeps versions with a validity interval `[valid_from, valid_to)` on the events'
 * `occurred_at` clock (`valid_to` null: still valid), so a reader asks for the row valid `at`
 * a moment: `valid_from <= at AND (valid_to IS NULL OR valid_to > at)`.
 */
export const accessTables = (table: (name: string) => string): readonly string[] => [
  // An account as it was: a person's name, display name and DN; a service account's name.
  `CREATE TABLE ${table("accounts")} (
     id uuid NOT NULL,
     kind text NOT NULL CHECK (kind IN ('service', 'person')),
     origin text NOT NULL,
     subject text,
     name text NOT NULL,
     display_name text,
     dn text,
     valid_from timestamptz NOT NULL,
     valid_to timestamptz,
     position bigint NOT NULL)`,
  `CREATE INDEX ON ${table("accounts")} (id, valid_from)`,
  `CREATE INDEX ON ${table("accounts")} (name)`,
  // The principals a person's identity provider gave, and when it said so.
  `CREATE TABLE ${table("principal_sets")} (
     account_id uuid NOT NULL,
     principals text[] NOT NULL,
     over_limit boolean NOT NULL,
     principal_count integer NOT NULL,
     refreshed_at timestamptz NOT NULL,
     valid_from timestamptz NOT NULL,
     valid_to timestamptz)`,
  `CREATE INDEX ON ${table("principal_sets")} (account_id, valid_from)`,
  // A service account's tokens' access.
  `CREATE TABLE ${table("service_access")} (
     account_id uuid NOT NULL,
     access text[] NOT NULL,
     valid_from timestamptz NOT NULL,
     valid_to timestamptz)`,
  `CREATE INDEX ON ${table("service_access")} (account_id, valid_from)`,
  // The active Access Configuration: who activated which version with which grants.
  `CREATE TABLE ${table("activations")} (
     version integer NOT NULL,
     digest text NOT NULL,
     activated_by text NOT NULL,
     grants jsonb NOT NULL,
     valid_from timestamptz NOT NULL,
     valid_to timestamptz,
     ended_by text)`,
  `CREATE INDEX ON ${table("activations")} (valid_from)`,
];

export interface AccountVersionRow {
  readonly id: string;
  readonly kind: "service" | "person";
  readonly origin: string;
  readonly subject: string | null;
  readonly name: string;
  readonly display_name: string | null;
  readonly dn: string | null;
  readonly valid_from: Date;
}

export interface ActivationRow {
  readonly version: number;
  readonly activated_by: string;
  readonly grants: Readonly<Record<string, readonly string[]>>;
  readonly valid_from: Date;
}
