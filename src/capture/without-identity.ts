import { captureWithoutIdentity } from "../metrics.ts";
import type { CaptureContext } from "./context.ts";

/** What an entry without an identity asks of its directory's administrator. */
export const WITHOUT_IDENTITY_HINT =
  "enable the server's entryUUID support (389 Directory Server: the entryUUID plugin and its fixup task), or let annal's bind read the identity attribute";

/**
 * The entries a capture pass read, or its log named, that have no identity annal can use
 * (`[directory] identity`): not recorded, so counted and said once a pass with a code, a hint
 * and a few of their DNs, as the import does, never skipped in silence. An entry made before
 * 389's entryUUID plugin was on, with identity "entryUUID", is one until the plugin's fixup.
 */
export function noteWithoutIdentity(
  context: Pick<CaptureContext, "log">,
  source: string,
  dns: readonly string[],
): void {
  if (dns.length === 0) return;
  captureWithoutIdentity.inc({ source }, dns.length);
  context.log.warn(
    {
      code: "ANNAL_ENTRY_WITHOUT_IDENTITY",
      entries: dns.length,
      examples: [...new Set(dns)].slice(0, 3),
      hint: WITHOUT_IDENTITY_HINT,
    },
    `capture (${source}) read ${dns.length} ${dns.length === 1 ? "write" : "writes"} of entries with no identity annal can use (entryUUID, nsUniqueId or objectGUID): not recorded`,
  );
}
