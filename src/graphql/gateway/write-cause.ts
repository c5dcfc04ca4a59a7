import type { Pool } from "../../db/index.ts";
import { recordWriteIntent, writeFingerprint, type WriteIntent } from "../../capture/index.ts";
import type { EventStore } from "../../store/index.ts";
import type { DirectoryWrite } from "../context.ts";
import { DIRECTORY_WRITE_REQUESTED, type DirectoryWriteRequested } from "../../events/index.ts";

/**
 * Records a mutation's directory write in the log (`DirectoryWriteRequested` on the account's
 * stream `graphql-writes-<account id>`) and notes the write with that event as its cause, so
 * the change capture records names the mutation and the account it was made for. Called
 * just before the write; if it fails, the write is not made. The note is answered, to be
 * withdrawn if the directory refuses the write (the request stays in the log: it was made).
 */
export async function recordMutationWrite(
  deps: { readonly pool: Pool; readonly store: EventStore },
  write: DirectoryWrite,
): Promise<WriteIntent> {
  const data: DirectoryWriteRequested = {
    requestId: write.requestId,
    operation: write.operation,
    dn: write.dn,
    newDN: write.newDN ?? null,
    attributes: [...new Set((write.changes ?? []).map((change) => change.attribute))],
    actor: write.actor,
    account: write.account,
  };
  const { events } = await deps.store.appendToStream(`graphql-writes-${write.account.id}`, [
    {
      type: DIRECTORY_WRITE_REQUESTED,
      data,
      metadata: { actor: write.account.name, source: "graphql", correlationId: write.requestId },
    },
  ]);
  return recordWriteIntent(deps.pool, {
    dn: write.dn,
    actor: write.actor,
    fingerprint: writeFingerprint(fingerprintOf(write)),
    causationId: events[0]!.id,
    correlationId: write.requestId,
  });
}

function fingerprintOf(write: DirectoryWrite): Parameters<typeof writeFingerprint>[0] {
  switch (write.operation) {
    case "add":
    case "delete":
      return { kind: write.operation };
    case "modifyDN":
      return { kind: "modrdn", newRDN: write.newRDN ?? "" };
    case "modify":
      return {
        kind: "modify",
        changes: write.changes ?? [],
        ...(write.valuesDigest === undefined ? {} : { digest: write.valuesDigest }),
      };
  }
}
