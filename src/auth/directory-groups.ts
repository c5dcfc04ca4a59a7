import { eq, normalizeDN, or, type DirectoryClient } from "../directory/index.ts";

/** DNs per search: a filter of `member=` and `uniqueMember=` terms for each. */
const BATCH = 50;

/**
 * The groups `dn` is a member of, directly or through nested groups: every entry under `base`
 * whose `member` or `uniqueMember` (groupOfNames, groupOfUniqueNames) names the person or a
 * group found before, level by level, each group once (a cycle ends). Normalised DNs, sorted.
 * Stops looking once more than `ceiling` are found: `count` is then `ceiling + 1`, enough to
 * know the limit is passed without reading a huge directory to the end.
 *
 * @example
 * const { groups } = await directoryGroupsOf(directory, "dc=example,dc=org", aliceDN, 7000);
 */
export async function directoryGroupsOf(
  directory: DirectoryClient,
  base: string,
  dn: string,
  ceiling: number,
): Promise<{ groups: string[]; count: number }> {
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
  const sorted = [...groups].sort();
  return { groups: sorted.slice(0, ceiling + 1), count: Math.min(sorted.length, ceiling + 1) };
}
