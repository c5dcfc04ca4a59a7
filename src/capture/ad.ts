import { AnnalError } from "../errors/index.ts";
import { guidText, type DirectoryEntry } from "../directory/index.ts";
import type { CaptureContext } from "./context.ts";

/**
 * Where a domain controller's changes stand: its `highestCommittedUSN` (every write a DC
 * applies takes the next number of its own counter, and an object's `uSNChanged` is the number
 * of its last write there), and who counts: the DC's `invocationId`. USNs belong to one DC's
 * database: another DC, or the same one restored from a backup (AD gives it a new invocationId
 * then), numbers its writes otherwise, and a checkpoint of the other's means nothing to it.
 */
export interface ADPlace {
  /** The DC's invocationId (its NTDS Settings object's), as GUID text. */
  readonly invocationId: string;
  readonly usn: bigint;
}

/** What capture reads of the DC: its place, and where its deleted objects are. */
export interface ADController extends ADPlace {
  /** `CN=Deleted Objects,<defaultNamingContext>`: the domain's tombstones. */
  readonly deletedObjects: string;
}

/**
 * The checkpoint as stored: `<invocationId>@<usn>`. The USN is compared as a number, never as
 * text ("999" sorts after "1000").
 *
 * @example formatADPlace({ invocationId: "967a695f-…", usn: 4012n }) // "967a695f-…@4012"
 */
export function formatADPlace(place: ADPlace): string {
  return `${place.invocationId}@${place.usn}`;
}

/** The checkpoint's place, or undefined for text that is not one. */
export function parseADPlace(text: string): ADPlace | undefined {
  const match = /^([0-9a-f-]{36})@(\d+)$/.exec(text);
  if (!match) return undefined;
  return { invocationId: match[1]!, usn: BigInt(match[2]!) };
}

/**
 * The DC's place and its deleted objects' container, from its root DSE (`highestCommittedUSN`,
 * `dsServiceName`, `defaultNamingContext`) and the NTDS Settings object `dsServiceName` names
 * (`invocationId`). A server whose root DSE has no highestCommittedUSN is not an AD DC:
 * `ANNAL_CAPTURE_SOURCE_MISSING`.
 */
export async function readADController(
  context: Pick<CaptureContext, "directory">,
): Promise<ADController> {
  const root = await context.directory.get("", {
    attributes: ["highestCommittedUSN", "dsServiceName", "defaultNamingContext"],
  });
  const usn = root && text(root, "highestCommittedUSN");
  const service = root && text(root, "dsServiceName");
  const naming = root && text(root, "defaultNamingContext");
  if (!usn || !/^\d+$/.test(usn) || !service || !naming) {
    throw new AnnalError(
      "ANNAL_CAPTURE_SOURCE_MISSING",
      "capture's source is \"ad\", and the directory's root DSE names no highestCommittedUSN, dsServiceName and defaultNamingContext: it is not an Active Directory domain controller",
      {
        hint: 'source = "ad" reads an Active Directory domain controller (Windows, or Samba\'s AD DC); for OpenLDAP set "accesslog", for 389 Directory Server "changelog", for any other server "poll"',
      },
    );
  }
  const settings = await context.directory.get(service, {
    attributes: ["invocationId"],
    binaryAttributes: ["invocationId"],
  });
  const raw = settings?.attributes.invocationId?.[0] ?? settings?.attributes.invocationID?.[0];
  const invocationId = Buffer.isBuffer(raw) ? guidText(raw) : undefined;
  if (!invocationId) {
    throw new AnnalError(
      "ANNAL_CAPTURE_SOURCE_MISSING",
      `capture's source is "ad", and annal's bind cannot read the invocationId of ${service}, the DC's NTDS Settings object its root DSE names`,
    );
  }
  return { invocationId, usn: BigInt(usn), deletedObjects: `CN=Deleted Objects,${naming}` };
}

/** The first value of `name` (compared without case) as text. */
export function text(entry: DirectoryEntry, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const key of Object.keys(entry.attributes)) {
    if (key.toLowerCase() !== lower) continue;
    const value = entry.attributes[key]?.[0];
    return Buffer.isBuffer(value) ? value.toString("utf8") : value;
  }
  return undefined;
}
