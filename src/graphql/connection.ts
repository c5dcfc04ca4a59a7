import { createHash } from "node:crypto";
import { BadUserInputError } from "./errors.ts";

export const DEFAULT_FIRST = 20;
export const MAX_FIRST = 100;

/** Where one page of a connection starts and how long it is. */
export interface PageRequest {
  readonly offset: number;
  readonly first: number;
}

/**
 * The page a connection field's arguments ask for: `first`/`after` of the field or of its
 * `paging: LDAPPaging` argument. `scope` names the list the cursor belongs to (a search's base
 * and filter, a DN list's owner): a cursor of another list is refused like a forged one.
 */
export function pageRequest(args: Record<string, unknown>, scope: string): PageRequest {
  const paging = (args.paging ?? {}) as { first?: unknown; after?: unknown };
  const first = firstOf(args.first ?? paging.first);
  const after = args.after ?? paging.after;
  if (after === undefined || after === null) return { offset: 0, first };
  return { offset: decodeCursor(after, scope), first };
}

/** `first` of a connection: 1 to 100, `DEFAULT_FIRST` when left out. */
export function firstOf(value: unknown): number {
  const first = value ?? DEFAULT_FIRST;
  if (typeof first !== "number" || !Number.isInteger(first) || first < 1 || first > MAX_FIRST) {
    throw new BadUserInputError(`first must be between 1 and ${MAX_FIRST}`, {
      argument: "first",
      hint: `ask for 1 to ${MAX_FIRST} nodes and follow pageInfo.endCursor for more`,
    });
  }
  return first;
}

function invalidCursor(): BadUserInputError {
  return new BadUserInputError("Invalid pagination cursor", {
    argument: "after",
    hint: "pass a cursor from pageInfo of the same field, unchanged",
  });
}

/**
 * A keyset cursor: the key of the last node of a page (an id, a log position), tied to its
 * list like an offset cursor.
 */
export function encodeKeyCursor(key: string, scope: string): string {
  return Buffer.from(`k1:${scopeTag(scope)}:${key}`, "utf8").toString("base64url");
}

/** The key of a keyset cursor, checked against `valid`; `Invalid pagination cursor` if not one. */
export function decodeKeyCursor(cursor: unknown, scope: string, valid: RegExp): string {
  if (typeof cursor !== "string" || cursor.length > 400) throw invalidCursor();
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const prefix = `k1:${scopeTag(scope)}:`;
  if (!text.startsWith(prefix)) throw invalidCursor();
  const key = text.slice(prefix.length);
  if (!valid.test(key)) throw invalidCursor();
  return key;
}

function scopeTag(scope: string): string {
  return createHash("sha256").update(scope).digest("base64url").slice(0, 8);
}

/** An opaque cursor: the position after which the next page starts, tied to its list. */
export function encodeCursor(position: number, scope: string): string {
  return Buffer.from(`c1:${scopeTag(scope)}:${position}`, "utf8").toString("base64url");
}

export function decodeCursor(cursor: unknown, scope: string): number {
  if (typeof cursor !== "string" || cursor.length > 200) throw invalidCursor();
  const match = /^c1:([A-Za-z0-9_-]{8}):(0|[1-9][0-9]{0,8})$/.exec(
    Buffer.from(cursor, "base64url").toString("utf8"),
  );
  if (!match || match[1] !== scopeTag(scope)) throw invalidCursor();
  return Number(match[2]);
}

/** A connection object; `totalCount` is counted only when a query asks for it. */
export interface Connection<T> {
  readonly nodes: readonly T[];
  readonly pageInfo: {
    readonly hasNextPage: boolean;
    readonly hasPreviousPage: boolean;
    readonly startCursor: string | null;
    readonly endCursor: string | null;
  };
  readonly totalCount: () => Promise<number> | number;
}

export function connection<T>(
  nodes: readonly T[],
  page: PageRequest,
  hasNextPage: boolean,
  scope: string,
  totalCount: () => Promise<number> | number,
): Connection<T> {
  return {
    nodes,
    pageInfo: {
      hasNextPage,
      hasPreviousPage: page.offset > 0,
      startCursor: nodes.length === 0 ? null : encodeCursor(page.offset, scope),
      endCursor: nodes.length === 0 ? null : encodeCursor(page.offset + nodes.length, scope),
    },
    totalCount,
  };
}
