import { createHash } from "node:crypto";
import type { EntryState } from "../events/index.ts";

/**
 * The identity of a change polling observed, by what it did: the entry, the version of its
 * stream the change follows, and a digest of the state it left (`deleted` for a delete), as
 * `<entryUUID>:<version>:<digest>`. It is the change's idempotency key (after `poll:`) and
 * the `changeId` of a change that could not be recorded.
 *
 * Neither a time nor a CSN is in it: modifyTimestamp has whole seconds (two writes in one
 * second share it) and Active Directory returns neither it, for `*`, nor a CSN, so a key made
 * of them was shared by different changes, and every change after the first was dropped as a
 * repeat. By what it did, a write that leaves a state other than the last recorded one is a
 * change of its own, a write back to an earlier state included (it follows a later version),
 * while the same state read twice from the same version is one change (`changeBetween`
 * records none from a state to itself, and two readers that race get one key).
 *
 * @example polledChangeId("6e2d…", 3, after) // "6e2d…:3:9f86d081884c7d65…"
 */
export function polledChangeId(
  entryUUID: string,
  fromVersion: number,
  after: EntryState | null,
): string {
  return `${entryUUID}:${fromVersion}:${after ? stateDigest(after) : "deleted"}`;
}

/**
 * SHA-256 (hex) of what a change compares (`changeBetween`): the DN and the user attributes,
 * names sorted, each name's values in the order the log records them. Operational attributes
 * are left out: a state that differs only in them is no change.
 */
export function stateDigest(state: Pick<EntryState, "dn" | "attributes">): string {
  const names = Object.keys(state.attributes).sort();
  const canonical = JSON.stringify([state.dn, names.map((name) => [name, state.attributes[name]])]);
  return createHash("sha256").update(canonical).digest("hex");
}
