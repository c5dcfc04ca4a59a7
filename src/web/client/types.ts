import { rest } from "./api.ts";

/** A type of directory entry the REST channel serves: its path segment and configured name. */
export interface EntryType {
  /** `users` in `/api/entries/users`. */
  readonly segment: string;
  /** `user`, as changes name it (`entryType`). */
  readonly name: string;
}

let types: Promise<EntryType[]> | undefined;

/**
 * The entry types, read from the REST channel's OpenAPI description (`/api.json`), in the
 * order the configuration lists them.
 */
export function entryTypes(): Promise<EntryType[]> {
  types ??= rest<{ paths: Record<string, { get?: { "x-annal-entry-type"?: string } }> }>(
    "/api.json",
  ).then((document) => {
    const found: EntryType[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      const match = /^\/api\/entries\/([^/{}]+)$/.exec(path);
      if (match) {
        found.push({ segment: match[1]!, name: item.get?.["x-annal-entry-type"] ?? match[1]! });
      }
    }
    return found;
  });
  // A failure (a lost connection) is not kept: the next page asks again.
  types.catch(() => {
    types = undefined;
  });
  return types;
}

/** Why a change was made, as the REST channel's `cause` says (null: made in the directory). */
export type Cause =
  | {
      kind: "changeEvent";
      id: string;
      webhook: string;
      source: string;
      eventId: string;
      subject: string;
    }
  | { kind: "mutation"; id: string; requestId: string; account: string }
  | {
      kind: "workflow";
      id: string;
      instanceId: string;
      workflow: string;
      step: string;
      attempt: number;
      approvedBy: { accountId: string; name: string; dn?: string | null } | null;
    }
  | { kind: "event"; id: string; type: string };

/** A change as `/api/changes` and `/api/entries/{type}/{id}/changes` answer it. */
export interface ChangeNode {
  readonly cursor: string;
  readonly changeId: string;
  readonly entryUUID: string;
  readonly id: string | null;
  readonly dn: string;
  readonly oldDn: string | null;
  readonly type: string;
  readonly entryType: string | null;
  readonly occurredAt: string;
  readonly recordedAt: string;
  readonly actor: string | null;
  readonly attributes: readonly string[];
  readonly cause: Cause | null;
  readonly patch?: readonly { op: string; path: string; value?: unknown; from?: string }[];
}

export interface ChangePage {
  readonly nodes: ChangeNode[];
  readonly pageInfo?: {
    readonly hasNextPage: boolean;
    readonly hasPreviousPage: boolean;
    readonly startCursor: string | null;
    readonly endCursor: string | null;
  };
}

/** The REST type segment of a configured type name (`user` → `users`). */
export async function segmentOfType(typeName: string | null): Promise<string | undefined> {
  if (!typeName) return undefined;
  return (await entryTypes()).find((t) => t.name === typeName)?.segment;
}
