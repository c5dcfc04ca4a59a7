import { invalidParameter, RestError } from "./errors.ts";
import type { QueryParameters } from "./params.ts";

/** The page a request asks for, before its cursor is decoded. */
export interface PageRequest {
  /** `forward`: the first `limit` after `after`; `backward`: the last `limit` before `before`. */
  readonly direction: "forward" | "backward";
  readonly limit: number;
  /** The raw cursor and the parameter it came in. */
  readonly cursor?: { readonly parameter: "after" | "before"; readonly value: string };
}

export const PAGE_PARAMETERS = ["first", "after", "last", "before", "limit"] as const;

function pageSize(params: QueryParameters, name: string, max: number): number | undefined {
  const text = params.get(name);
  if (text === undefined) return undefined;
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1 || Number(text) > max) {
    throw invalidParameter(name, `expected a whole number from 1 to ${max}`, {
      expected: `an integer from 1 to ${max}`,
      hint:
        Number(text) > max
          ? `pages hold at most ${max}; page on with the endCursor of each page (after=...)`
          : undefined,
    });
  }
  return Number(text);
}

function conflict(message: string): RestError {
  return new RestError("ANNAL_PAGINATION_CONFLICT", message, {
    hint: "page forward with first and after, or backward with last and before; limit stands for either",
  });
}

/**
 * Cursor pagination as in Relay: `first`/`after` forward, `last`/`before` backward; `limit` is
 * `last` when `before` is given and `first` otherwise. Mixing the two directions, or `limit`
 * with `first` or `last`, is refused rather than guessed.
 */
export function readPage(
  params: QueryParameters,
  limits: { readonly pageSize: number; readonly maxPageSize: number },
): PageRequest {
  const first = pageSize(params, "first", limits.maxPageSize);
  const last = pageSize(params, "last", limits.maxPageSize);
  const limit = pageSize(params, "limit", limits.maxPageSize);
  const after = params.get("after");
  const before = params.get("before");
  if (after !== undefined && before !== undefined) {
    throw conflict("after and before cannot be combined");
  }
  if (first !== undefined && last !== undefined)
    throw conflict("first and last cannot be combined");
  if (limit !== undefined && (first !== undefined || last !== undefined)) {
    throw conflict("limit cannot be combined with first or last");
  }
  if (first !== undefined && before !== undefined) {
    throw conflict("first pages forward and cannot take before");
  }
  if (last !== undefined && after !== undefined) {
    throw conflict("last pages backward and cannot take after");
  }
  const backward = last !== undefined || before !== undefined;
  const size = first ?? last ?? limit ?? limits.pageSize;
  if (backward) {
    return {
      direction: "backward",
      limit: size,
      ...(before === undefined ? {} : { cursor: { parameter: "before", value: before } }),
    };
  }
  return {
    direction: "forward",
    limit: size,
    ...(after === undefined ? {} : { cursor: { parameter: "after", value: after } }),
  };
}

/** Relay's `pageInfo`. */
export interface PageInfo {
  readonly hasNextPage: boolean;
  readonly hasPreviousPage: boolean;
  readonly startCursor: string | null;
  readonly endCursor: string | null;
}

/**
 * `pageInfo` from a page read in its direction: `more` (rows beyond the page that way) and
 * `behind` (rows on the other side of the cursor it started from).
 */
export function pageInfo(
  page: PageRequest,
  result: { more: boolean; behind: boolean },
  cursors: { start: string | null; end: string | null },
): PageInfo {
  const forward = page.direction === "forward";
  return {
    hasNextPage: forward ? result.more : result.behind,
    hasPreviousPage: forward ? result.behind : result.more,
    startCursor: cursors.start,
    endCursor: cursors.end,
  };
}
