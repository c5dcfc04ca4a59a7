import type { DirectoryEntry } from "./entry.ts";
import { DirectoryError } from "./errors.ts";

/**
 * Range retrieval (Active Directory): a multi-valued attribute with more values than the
 * server's MaxValRange (1,500 on Windows) comes back as `member;range=0-1499`, and the rest is
 * asked for by name, `member;range=1500-*`, until an answer ends in `*`. Samba answers in ranges
 * only when asked for one.
 */
const RANGED = /^(.+);range=(\d+)-(\d+|\*)$/i;

/** Reads one attribute description of one entry: `member;range=1500-*` of `dn`. */
export type RangeReader = (dn: string, attribute: string) => Promise<DirectoryEntry | undefined>;

/** Whether any entry holds an attribute that came in ranges. */
export function hasRanges(entries: readonly DirectoryEntry[]): boolean {
  return entries.some((entry) => Object.keys(entry.attributes).some((name) => RANGED.test(name)));
}

/**
 * The entries with every ranged attribute read whole and named without its range
 * (`member;range=0-1499` … `member;range=3000-*` become `member`), so no `;range=` name goes
 * further. Changes the entries in place and returns them.
 */
export async function completeRanges(
  entries: DirectoryEntry[],
  read: RangeReader,
): Promise<DirectoryEntry[]> {
  for (const entry of entries) {
    for (const name of Object.keys(entry.attributes)) {
      const ranged = RANGED.exec(name);
      if (!ranged) continue;
      const [, base, , firstEnd] = ranged;
      const values: (string | Buffer)[] = [...entry.attributes[name]!];
      let end = firstEnd!;
      while (end !== "*") {
        const next = await read(entry.dn, `${base};range=${Number(end) + 1}-*`);
        const found = Object.entries(next?.attributes ?? {}).find(([nextName]) => {
          const match = RANGED.exec(nextName);
          return match && match[1]!.toLowerCase() === base!.toLowerCase();
        });
        if (!found) {
          throw new DirectoryError(
            "ANNAL_LDAP_OPERATION_FAILED",
            `the directory answered ${name} of ${entry.dn} in ranges and then not the range after ${end}`,
            { operation: "search", dn: entry.dn, status: 502 },
          );
        }
        values.push(...found[1]);
        end = RANGED.exec(found[0])![3]!;
      }
      delete entry.attributes[name];
      entry.attributes[base!] = values as string[] | Buffer[];
    }
  }
  return entries;
}
