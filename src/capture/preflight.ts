import { AnnalError } from "../errors/index.ts";
import { DirectoryError, present } from "../directory/index.ts";
import { captureWithoutIdentity } from "../metrics.ts";
import { WITHOUT_IDENTITY_HINT } from "./without-identity.ts";
import type { CaptureContext } from "./context.ts";
import { readADController } from "./ad.ts";
import { CHANGELOG_BASE } from "./changelog.ts";
import { ACCESSLOG_BASE } from "./from-accesslog.ts";
import type { CaptureSource } from "./service.ts";

/**
 * What capture depends on, checked before it first reads: the base entry, and the change
 * source. A server asked for a base it does not have may answer with no entry and success
 * (389 Directory Server does, for a paged search), and an import or a pass would then read
 * nothing and say it was done. Throws a coded error instead; capture's pass records it, and
 * `/readyz` names it.
 */
export async function checkCaptureSources(
  context: Pick<CaptureContext, "directory" | "base">,
  source: CaptureSource,
): Promise<void> {
  if (!(await exists(context, context.base))) {
    throw new AnnalError(
      "ANNAL_DIRECTORY_BASE_MISSING",
      `the directory has no entry ${context.base} that annal's bind can read ([directory] base)`,
    );
  }
  if (source === "ad") return checkADSource(context);
  const log = LOGS[source];
  if (log !== undefined && !(await exists(context, log))) {
    throw new AnnalError(
      "ANNAL_CAPTURE_SOURCE_MISSING",
      `capture's source is "${source}", and the directory has no ${log} that annal's bind can read`,
    );
  }
}

/** Where each source's log of writes is; poll reads the entries themselves. */
const LOGS: Record<CaptureSource, string | undefined> = {
  accesslog: ACCESSLOG_BASE,
  changelog: CHANGELOG_BASE,
  ad: undefined,
  poll: undefined,
};

/**
 * The "ad" source reads the DC's USNs from its root DSE (not an AD DC without them) and the
 * domain's tombstones with Show Deleted: a bind that may not read `CN=Deleted Objects` (by
 * default only administrators may list it) would record no delete at all. A DC that shows the
 * container but hides the tombstones in it from the bind (Samba does, to a plain user) cannot
 * be told from one with none: that is for the guide to say.
 */
async function checkADSource(context: Pick<CaptureContext, "directory">): Promise<void> {
  const dc = await readADController(context);
  let readable = false;
  try {
    for await (const page of context.directory.search(dc.deletedObjects, {
      scope: "base",
      filter: present("objectClass"),
      attributes: ["1.1"],
      showDeleted: true,
    })) {
      if (page.length > 0) readable = true;
    }
  } catch (error) {
    const refused =
      error instanceof DirectoryError &&
      (error.resultCode === NO_SUCH_OBJECT || error.resultCode === INSUFFICIENT_ACCESS);
    if (!refused) throw error;
  }
  if (!readable) {
    throw new AnnalError(
      "ANNAL_CAPTURE_SOURCE_MISSING",
      `capture's source is "ad", and annal's bind cannot read ${dc.deletedObjects} with the Show Deleted control, so no delete would be captured`,
      {
        hint: `give annal's account List Contents and Read Property on ${dc.deletedObjects} (dsacls "${dc.deletedObjects}" /takeownership, then dsacls "${dc.deletedObjects}" /g <DOMAIN>\\<account>:LCRP), or set [directory.capture] source = "poll"`,
      },
    );
  }
}

/** Whether a base-scope read of `dn` finds the entry (missing and hidden look the same). */
async function exists(context: Pick<CaptureContext, "directory">, dn: string): Promise<boolean> {
  try {
    for await (const page of context.directory.search(dn, {
      scope: "base",
      filter: present("objectClass"),
      attributes: ["1.1"],
    })) {
      if (page.length > 0) return true;
    }
    return false;
  } catch (error) {
    if (error instanceof DirectoryError && error.resultCode === NO_SUCH_OBJECT) return false;
    throw error;
  }
}

const NO_SUCH_OBJECT = 32;
const INSUFFICIENT_ACCESS = 50;

/**
 * What an import read that it could not store: entries without an identity are counted, said
 * once a read with a code and a hint, and counted in `/metrics`; an import that read entries
 * and stored none refuses, since a log without the directory's entries is no history of it.
 * So does the import that starts a history (`source` "import") when it read nothing under the
 * base but the base itself: the base is wrong, or the entries are hidden from annal's bind.
 * A periodic snapshot of a directory that has since been emptied is no such case.
 */
export function checkImportStored(
  context: Pick<CaptureContext, "log" | "base">,
  source: string,
  read: { readonly entries: number; readonly stored: number; readonly unidentified: number },
  examples: readonly string[],
): void {
  if (source === "import" && read.entries <= 1) {
    throw new AnnalError(
      "ANNAL_DIRECTORY_BASE_EMPTY",
      `the directory's base ${context.base} holds no entry that annal's bind can read but itself ([directory] base), so the import would record no history`,
    );
  }
  if (read.unidentified > 0) {
    captureWithoutIdentity.inc({ source }, read.unidentified);
    context.log.warn(
      {
        code: "ANNAL_ENTRY_WITHOUT_IDENTITY",
        entries: read.unidentified,
        examples,
        hint: WITHOUT_IDENTITY_HINT,
      },
      `${read.unidentified} of ${read.entries} entries read have no identity annal can use (entryUUID, nsUniqueId or objectGUID) and were not recorded`,
    );
  }
  if (read.entries > 0 && read.stored === 0 && read.unidentified === read.entries) {
    throw new AnnalError(
      "ANNAL_IMPORT_STORED_NOTHING",
      `the import read ${read.entries} entries and could store none of them: none has an identity annal can use`,
    );
  }
}
