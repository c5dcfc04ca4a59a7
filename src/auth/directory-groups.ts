import { DirectoryError, eq, normalizeDN, or, type DirectoryClient } from "../directory/index.ts";

/** DNs per search: a filter of `member=` and `uniqueMember=` terms for each. */
const BATCH = 50;

/** LDAP_MATCHING_RULE_IN_CHAIN (LDAP_MATCHING_RULE_TRANSITIVE_EVAL): AD's walk of `member`. */
export const IN_CHAIN = "1.2.840.113556.1.4.1941";
/** LDAP_CAP_ACTIVE_DIRECTORY_OID in the root DSE's `supportedCapabilities`: the server is AD. */
export const ACTIVE_DIRECTORY_CAPABILITY = "1.2.840.113556.1.4.800";

/** Whether a directory is Active Directory, asked of its root DSE once per client. */
const activeDirectory = new WeakMap<DirectoryClient, Promise<boolean>>();

/**
 * Whether `directory` is Active Directory (Samba's AD DC included): its root DSE lists
 * `supportedCapabilities` 1.2.840.113556.1.4.800. Asked once per client; a read that fails is
 * asked again next time (and counts as not AD meanwhile: the walk works everywhere).
 */
export function isActiveDirectory(directory: DirectoryClient): Promise<boolean> {
  let known = activeDirectory.get(directory);
  if (known === undefined) {
    known = directory
      .get("", { attributes: ["supportedCapabilities"] })
      .then((root) =>
        (root?.attributes.supportedCapabilities ?? []).some(
          (value) => String(value) === ACTIVE_DIRECTORY_CAPABILITY,
        ),
      );
    activeDirectory.set(directory, known);
    known.catch(() => activeDirectory.delete(directory));
  }
  return known.catch(() => false);
}

/**
 * The groups `dn` is a member of, directly or through nested groups. On Active Directory one
 * search asks the server for them: `(member:1.2.840.113556.1.4.1941:=<dn>)`, which AD answers
 * by walking `member` itself (LDAP_MATCHING_RULE_IN_CHAIN). Elsewhere, or if AD refuses it,
 * annal walks: every entry under `base` whose `member` or `uniqueMember` (groupOfNames,
 * groupOfUniqueNames) names the person or a group found before, level by level, each group
 * once (a cycle ends). Either way: normalised DNs, sorted; a primary group (AD's
 * `primaryGroupID`, Domain Users) is no `member` and so is not among them. Stops looking once
 * more than `ceiling` are found: `count` is then `ceiling + 1`, enough to know the limit is
 * passed without reading a huge directory to the end.
 *
 * @example
 * const { groups } = await directoryGroupsOf(directory, "dc=example,dc=org", aliceDN, 7000);
 */
export async function directoryGroupsOf(
  directory: DirectoryClient,
  base: string,
  dn: string,
  ceiling: number,
): Promise<{ groups: string[]; count: number; inChain: boolean }> {
  const found = (await isActiveDirectory(directory))
    ? await inChain(directory, base, dn, ceiling)
    : undefined;
  const groups = found ?? (await walk(directory, base, dn, ceiling));
  const sorted = [...groups].sort();
  return {
    groups: sorted.slice(0, ceiling + 1),
    count: Math.min(sorted.length, ceiling + 1),
    inChain: found !== undefined,
  };
}

/** AD's own answer, or undefined when it refuses the matching rule (then annal walks). */
async function inChain(
  directory: DirectoryClient,
  base: string,
  dn: string,
  ceiling: number,
): Promise<Set<string> | undefined> {
  const self = normalizeDN(dn);
  const groups = new Set<string>();
  try {
    for await (const page of directory.search(base, {
      extensibleMatch: { attribute: "member", rule: IN_CHAIN, value: dn },
      attributes: ["1.1"],
    })) {
      for (const entry of page) {
        const normalized = normalizeDN(entry.dn);
        if (normalized !== self) groups.add(normalized);
      }
      if (groups.size > ceiling) break;
    }
  } catch (error) {
    // A matching rule the server does not know is an error of the request (inappropriate
    // matching, protocol error), not of the directory: walk instead. Anything else is told.
    if (isRefusal(error)) return undefined;
    throw error;
  }
  return groups;
}

/** protocolError, inappropriateMatching, unwillingToPerform: a server without the rule. */
const REFUSALS = new Set([2, 18, 53]);

function isRefusal(error: unknown): boolean {
  return error instanceof DirectoryError && REFUSALS.has(error.resultCode ?? -1);
}

async function walk(
  directory: DirectoryClient,
  base: string,
  dn: string,
  ceiling: number,
): Promise<Set<string>> {
  const seen = new Set<string>([normalizeDN(dn)]);
  const groups = new Set<string>();
  let frontier = [dn];
  while (frontier.length > 0 && groups.size <= ceiling) {
    const next: string[] = [];
    for (let i = 0; i < frontier.length && groups.size <= ceiling; i += BATCH) {
      const batch = frontier.slice(i, i + BATCH);
      const filter = or(
        ...batch.flatMap((member) => [eq("member", member), eq("uniqueMember", member)]),
      );
      for await (const page of directory.search(base, { filter, attributes: ["1.1"] })) {
        for (const entry of page) {
          const normalized = normalizeDN(entry.dn);
          if (seen.has(normalized)) continue;
          seen.add(normalized);
          groups.add(normalized);
          next.push(entry.dn);
        }
      }
    }
    frontier = next;
  }
  return groups;
}
