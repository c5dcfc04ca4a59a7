import type { FastifyReply } from "fastify";
import type { FilterNode } from "../../filters/index.ts";
import {
  countMatchedDuring,
  matchedDuring,
  UUID,
  type Period,
  type Span,
} from "../../history/index.ts";
import type { AttributeCatalog } from "../catalog.ts";
import { readInclude, type RestContext } from "../context.ts";
import { queryDigest } from "../cursor.ts";
import { RestError } from "../errors.ts";
import type { FieldSelection } from "../fields.ts";
import { entryNode } from "../nodes.ts";
import { pageInfo, readPage } from "../pagination.ts";
import type { QueryParameters } from "../params.ts";

const DURING_PARTS = ["nodes", "pageInfo", "count"] as const;

export interface DuringSearch {
  readonly type: string;
  readonly filter: FilterNode;
  readonly selection: FieldSelection;
  readonly catalog: AttributeCatalog;
  readonly interval: Period;
  /** The interval as written (`P7D/now`): its pages read on over the period the first read. */
  readonly intervalText: string;
}

/** A span as the channel serves it: ISO 8601 moments, `to` null while it still holds. */
export function spanNode(span: Span): { from: string; to: string | null } {
  return { from: span.from.toISOString(), to: span.to?.toISOString() ?? null };
}

/**
 * `GET /api/entries/{type}?during=<start>/<end>`: the entries that matched the filter at any
 * moment of the interval, in entryUUID order, each a node of its last matching state with
 * `during`, the sub-intervals in which it matched (`matchedDuring`). Pages by keyset on the
 * entryUUID; `include=count` counts the entries.
 */
export async function searchDuring(
  context: RestContext,
  reply: FastifyReply,
  params: QueryParameters,
  search: DuringSearch,
): Promise<Record<string, unknown>> {
  const include = readInclude(params.get("include"), DURING_PARTS, ["nodes", "pageInfo"]);
  reply.header("cache-control", "no-store");
  let query = { type: search.type, filter: search.filter, period: search.interval };
  const body: Record<string, unknown> = {};
  if (include.has("nodes") || include.has("pageInfo")) {
    const page = readPage(params, context.config);
    const digest = queryDigest(["during", search.type, search.filter, search.intervalText]);
    let position: string | undefined;
    if (page.cursor) {
      const { parameter, value } = page.cursor;
      const decoded = context.codec.decode(parameter, value, "search", digest);
      const period = periodOf(decoded);
      if (!period || !Array.isArray(decoded) || !UUID.test(String(decoded[0]))) {
        throw new RestError("ANNAL_CURSOR_INVALID", `${parameter}: the cursor is not valid`, {
          hint: "pass a cursor exactly as annal returned it",
          details: { parameter },
        });
      }
      position = String(decoded[0]);
      query = { ...query, period };
    }
    const bounds = [query.period.start, query.period.end].map((m) => m?.toISOString() ?? null);
    const result = await matchedDuring(context.pool, query, {
      direction: page.direction,
      limit: page.limit,
      ...(position === undefined ? {} : { position }),
    });
    const cursorOf = (uuid: string | undefined) =>
      uuid === undefined ? null : context.codec.encode("search", digest, [uuid, ...bounds]);
    if (include.has("nodes")) {
      body.nodes = result.entries.map((entry) => ({
        ...entryNode(entry, search.type, search.selection, search.catalog),
        during: entry.spans.map(spanNode),
      }));
    }
    if (include.has("pageInfo")) {
      body.pageInfo = pageInfo(page, result, {
        start: cursorOf(result.entries[0]?.entryUUID),
        end: cursorOf(result.entries.at(-1)?.entryUUID),
      });
    }
  }
  if (include.has("count")) body.count = await countMatchedDuring(context.pool, query);
  return body;
}

/** The period a cursor carries after its entryUUID; undefined when it carries none. */
function periodOf(decoded: unknown): Period | undefined {
  if (!Array.isArray(decoded) || decoded.length !== 3) return undefined;
  const [start, end] = decoded
    .slice(1)
    .map((value) =>
      typeof value === "string" ? new Date(value) : value === null ? undefined : null,
    );
  if (start === null || end === null) return undefined;
  if ((start && Number.isNaN(start.getTime())) || (end && Number.isNaN(end.getTime()))) {
    return undefined;
  }
  return { start, end };
}
