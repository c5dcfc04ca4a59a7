import {
  ACCESS_TABLES,
  type AccountVersionRow,
  type ActivationRow,
} from "../../projections/access/index.ts";
import type { Queryable } from "../db/index.ts";
import type { AccessGrants } from "../events/index.ts";
import { byPrincipal } from "./access-configuration.ts";
import { normalizePrincipal } from "./caller.ts";

/** One account's access at a moment, and since when each part of it held. */
export interface AccountAccess {
  readonly id: string;
  readonly kind: "service" | "person";
  readonly name: string;
  readonly origin: string;
  readonly subject: string | null;
  readonly displayName: string | null;
  readonly dn: string | null;
  readonly principals: readonly string[];
  /** Empty while the principal limit was exceeded. */
  readonly access: readonly string[];
  readonly overPrincipalLimit: boolean;
  /** When the provider last confirmed the principals (people). */
  readonly principalsRefreshedAt: Date | null;
  /** Since when this access held unchanged: the latest start of what it is made of. */
  readonly since: Date;
}

export interface AccessReport {
  readonly at: Date;
  /** The Access Configuration active then, if any. */
  readonly configuration: {
    readonly version: number;
    readonly activatedBy: string;
    readonly activatedAt: Date;
    readonly grants: Readonly<Record<string, readonly string[]>>;
  } | null;
  readonly accounts: readonly AccountAccess[];
}

const VALID_AT = (alias: string, n: number) =>
  `${alias}.valid_from <= $${n} AND (${alias}.valid_to IS NULL OR ${alias}.valid_to > $${n})`;

/**
 * Who could do what at `at` (default now), from the `access` projection: every account that
 * existed then (or the one named by `account`: its id, its name, or `origin:name`), its
 * principals and the access the Access Configuration active then granted them (plus a
 * service account's token access), with since when that held.
 *
 * @example
 * const report = await accessAt(pool, { at: new Date("2026-11-01T00:00:00Z"), account: "directory:prossi" });
 */
export async function accessAt(
  db: Queryable,
  options: {
    readonly at?: Date;
    readonly account?: string;
    /**
     * Grants to use instead of the Access Configuration active then (normalised, as
     * `normalizeGrants` makes them): what access would have been under another configuration.
     */
    readonly grants?: AccessGrants;
  } = {},
): Promise<AccessReport> {
  const at = options.at ?? new Date();
  const activation = (
    await db.query<ActivationRow>(
      `SELECT version, activated_by, grants, valid_from FROM ${ACCESS_TABLES.activations} AS c
        WHERE ${VALID_AT("c", 1)} ORDER BY c.valid_from DESC LIMIT 1`,
      [at],
    )
  ).rows[0];
  const params: unknown[] = [at];
  let where = "";
  if (options.account !== undefined) {
    params.push(options.account);
    where = `AND (a.id::text = $2 OR a.name = $2 OR (a.origin || ':' || a.name) = $2)`;
  }
  const rows = await db.query<
    AccountVersionRow & {
      principals: string[] | null;
      over_limit: boolean | null;
      refreshed_at: Date | null;
      principals_from: Date | null;
      own_access: string[] | null;
      access_from: Date | null;
    }
  >(
    `SELECT a.id, a.kind, a.origin, a.subject, a.name, a.display_name, a.dn, a.valid_from,
            p.principals, p.over_limit, p.refreshed_at, p.valid_from AS principals_from,
            s.access AS own_access, s.valid_from AS access_from
       FROM ${ACCESS_TABLES.accounts} AS a
       LEFT JOIN ${ACCESS_TABLES.principalSets} AS p ON p.account_id = a.id AND ${VALID_AT("p", 1)}
       LEFT JOIN ${ACCESS_TABLES.serviceAccess} AS s ON s.account_id = a.id AND ${VALID_AT("s", 1)}
      WHERE ${VALID_AT("a", 1)} ${where}
      ORDER BY a.kind, a.origin, a.name, a.id`,
    params,
  );
  const active = options.grants ?? activation?.grants;
  const grants = active ? byPrincipal(active) : undefined;
  const accounts = rows.rows.map((row): AccountAccess => {
    const own =
      row.kind === "service"
        ? [`account:${row.id}`, `service:${row.name}`]
        : [`account:${row.id}`, ...(row.dn === null ? [] : [safeNormalize(row.dn)])];
    const principals = [...new Set([...(row.principals ?? []), ...own])];
    const over = row.over_limit === true;
    const held = new Set<string>(over ? [] : (row.own_access ?? []));
    if (!over && grants) {
      for (const principal of principals)
        for (const fn of grants.get(principal) ?? []) held.add(fn);
    }
    const starts = [row.valid_from, row.principals_from, row.access_from, activation?.valid_from]
      .filter((d): d is Date => d instanceof Date)
      .map((d) => d.getTime());
    return {
      id: row.id,
      kind: row.kind,
      name: row.name,
      origin: row.origin,
      subject: row.subject,
      displayName: row.display_name,
      dn: row.dn,
      principals,
      access: [...held].sort(),
      overPrincipalLimit: over,
      principalsRefreshedAt: row.refreshed_at,
      since: new Date(Math.max(...starts)),
    };
  });
  return {
    at,
    configuration: activation
      ? {
          version: activation.version,
          activatedBy: activation.activated_by,
          activatedAt: activation.valid_from,
          grants: activation.grants,
        }
      : null,
    accounts,
  };
}

function safeNormalize(dn: string): string {
  try {
    return normalizePrincipal(dn);
  } catch {
    return dn;
  }
}
