import { DirectoryError, eq } from "../directory/index.ts";
import type { CaptureContext } from "./context.ts";
import { ACCESSLOG_BASE } from "./from-accesslog.ts";

/**
 * What capture's passes search the accesslog by: every pass asks for the records logged after
 * its checkpoint (`reqEnd`). Without an equality index of `reqEnd` (OpenLDAP's `eq` index of a
 * generalized time also serves `>=`), each pass, idle or not, reads every record the
 * accesslog holds: measured, 28% of a core of slapd for an idle annal.
 */
export const ACCESSLOG_SEARCHED = ["reqEnd"] as const;

/** What annal found of the accesslog's indexes in `cn=config`. */
export type AccesslogIndexes =
  | { readonly readable: false }
  | { readonly readable: true; readonly database: string; readonly missing: readonly string[] };

/**
 * The accesslog database's equality indexes, read from `cn=config` (OpenLDAP's `olcDbIndex`
 * on the database whose `olcSuffix` is `cn=accesslog`), and which of those capture searches
 * by are missing. Not readable when the bind may not read `cn=config`, or the server keeps no
 * such entry (a slapd.conf without `database config` access, another server).
 */
export async function readAccesslogIndexes(
  context: Pick<CaptureContext, "directory">,
): Promise<AccesslogIndexes> {
  let found: { dn: string; values: string[] } | undefined;
  try {
    for await (const page of context.directory.search("cn=config", {
      scope: "one",
      filter: eq("olcSuffix", ACCESSLOG_BASE),
      attributes: ["olcDbIndex"],
    })) {
      for (const entry of page) {
        const values = (entry.attributes.olcDbIndex ?? []).map((value) =>
          Buffer.isBuffer(value) ? value.toString("utf8") : value,
        );
        found ??= { dn: entry.dn, values };
      }
    }
  } catch (error) {
    // noSuchObject, insufficientAccessRights: cn=config is not ours to read.
    if (error instanceof DirectoryError && error.resultCode !== undefined) {
      return { readable: false };
    }
    throw error;
  }
  if (!found) return { readable: false };
  const indexed = equalityIndexed(found.values);
  return {
    readable: true,
    database: found.dn,
    missing: ACCESSLOG_SEARCHED.filter((name) => !indexed.has(name.toLowerCase())),
  };
}

/**
 * The attributes (lower case) that `olcDbIndex` values index for equality. A value is
 * `<attrs> [<types>]`, each a comma-separated list; without types an attribute takes those of
 * `default`, and `default` names no attribute itself.
 */
export function equalityIndexed(values: readonly string[]): Set<string> {
  const parsed = values.map((value) => {
    const [attributes = "", types] = value.trim().split(/\s+/);
    return {
      attributes: attributes.split(",").map((name) => name.trim().toLowerCase()),
      types: types?.split(",").map((type) => type.trim().toLowerCase()),
    };
  });
  const defaults = parsed.find((p) => p.attributes.includes("default"))?.types ?? [];
  const indexed = new Set<string>();
  for (const { attributes, types } of parsed) {
    if (!(types ?? defaults).includes("eq")) continue;
    for (const name of attributes) if (name !== "default") indexed.add(name);
  }
  return indexed;
}

/** The line a missing index is added with, in both of OpenLDAP's configuration forms. */
export function accesslogIndexHint(missing: readonly string[], database?: string): string {
  const names = missing.join(",");
  return `add \`olcDbIndex: ${names} eq\` to ${database ?? "the accesslog database's entry in cn=config"} (slapd.conf: \`index ${names} eq\` in the accesslog database), so a capture pass reads only the new records`;
}
