import type { DirectoryClient } from "../../directory/index.ts";
import type { DirectoryWrite, HookDirectory } from "../definition/types.ts";

type DirectoryWrites = Pick<DirectoryClient, "add" | "modify" | "modifyDN" | "delete">;

/** The directory a worker hands providers: a client and the configured base DN. */
export interface DirectoryAccess {
  readonly client: Pick<
    DirectoryClient,
    "get" | "search" | "add" | "modify" | "modifyDN" | "delete"
  >;
  readonly base: string;
  /**
   * The client's writes, noted with their cause so that change capture links the directory
   * change to the change event (`causedWrites` of the capture module). Without it, writes go
   * out unnoted and the captured change has no causation id.
   */
  readonly causedBy?: (cause: { causationId: string; correlationId?: string }) => DirectoryWrites;
}

/** `access` whose writes carry `cause`, when the access can note causes. */
export function withCause(
  access: DirectoryAccess,
  cause: { causationId: string; correlationId?: string },
): DirectoryAccess {
  if (!access.causedBy) return access;
  const { client } = access;
  const writes = access.causedBy(cause);
  // Delegate method by method: the client is a class instance, whose methods a spread
  // would leave behind.
  return {
    ...access,
    client: {
      get: (...args) => client.get(...args),
      search: (...args) => client.search(...args),
      add: (...args) => writes.add(...args),
      modify: (...args) => writes.modify(...args),
      modifyDN: (...args) => writes.modifyDN(...args),
      delete: (...args) => writes.delete(...args),
    },
  };
}

/**
 * The provider's view of the directory: the client's reads as they are, and its writes
 * recorded in `writes` (operation, DN and attribute names, never values) for the outcome
 * event, whose causation is the change event. A write that throws is recorded too: it may
 * have reached the directory before the error.
 */
export function recordingDirectory(
  access: DirectoryAccess,
  writes: DirectoryWrite[],
): HookDirectory {
  const { client } = access;
  const track = async <T>(write: DirectoryWrite, run: () => Promise<T>): Promise<T> => {
    writes.push(write);
    return run();
  };
  return {
    base: access.base,
    get: (dn, options) => client.get(dn, options),
    search: (base, options) => client.search(base, options),
    add: (dn, attributes, options) =>
      track({ operation: "add", dn, attributes: Object.keys(attributes) }, () =>
        client.add(dn, attributes, options),
      ),
    modify: (dn, changes, options) =>
      track(
        { operation: "modify", dn, attributes: [...new Set(changes.map((c) => c.attribute))] },
        () => client.modify(dn, changes, options),
      ),
    modifyDN: (dn, newRDN, options) =>
      track({ operation: "modifyDN", dn }, () => client.modifyDN(dn, newRDN, options)),
    delete: (dn, options) => track({ operation: "delete", dn }, () => client.delete(dn, options)),
  };
}
