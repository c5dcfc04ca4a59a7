import { assertAccess } from "../../auth/index.ts";
import type { Queryable } from "../../db/index.ts";
import { parseDN } from "../../directory/index.ts";
import { entryUUIDForDn, UUID } from "../../history/index.ts";
import type { GatewayContext } from "../context.ts";
import { BadUserInputError } from "../errors.ts";
import { engineOf } from "./engine.ts";
import { changePage } from "./nodes.ts";

/** `Query.changes`: the directory's change feed, for accounts that may read it. */
export async function changes(context: GatewayContext, args: Record<string, unknown>) {
  assertAccess(context.viewer, "read");
  const db: Queryable = engineOf(context).pool;
  let entryUUID: string | undefined;
  const entry = args.entry;
  if (typeof entry === "string") {
    if (UUID.test(entry)) entryUUID = entry.toLowerCase();
    else {
      try {
        parseDN(entry);
      } catch {
        throw new BadUserInputError("Invalid entry filter", {
          argument: "entry",
          hint: "an entry's DN or its entryUUID",
        });
      }
      // An entry never known has no changes: an empty page, not an error.
      entryUUID =
        (await entryUUIDForDn(db, entry, "ever")) ?? "00000000-0000-0000-0000-000000000000";
    }
  }
  return changePage(context, entryUUID ? { entryUUID } : {}, args, `changes:${entryUUID ?? ""}`);
}
