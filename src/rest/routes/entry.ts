import { checkNotBeforeRetention } from "../../audit/index.ts";
import { createHash } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import {
  currentEntry,
  entryAt,
  EntryNotFoundError,
  entryUUIDForDn,
  HistoryBuildingError,
  lastVersion,
  parseGlobalId,
  UUID,
  type EntryRecord,
} from "../../history/index.ts";
import { applyPreferences, servedType, type RestContext, type ServedType } from "../context.ts";
import { RestError } from "../errors.ts";
import { locate } from "../../errors/index.ts";
import { parseFields } from "../fields.ts";
import { refuseOrReportUnknown, reportIgnoredParameters } from "../leniency.ts";
import { entryNode } from "../nodes.ts";
import { QueryParameters } from "../params.ts";
import { readPreferences } from "../prefer.ts";
import { parseMoment } from "../time.ts";
import { answerChanges } from "./changes.ts";

export const LOOKUP_PARAMETERS = ["at", "fields"] as const;

/**
 * The entryUUID an `{id}` names: an entryUUID, a global ID of this type, or a URL-encoded DN
 * (the entry that has it now, or had it `at` a moment, or, for its changes, last had it).
 */
export async function entryUUIDOf(
  context: RestContext,
  type: ServedType,
  id: string,
  at: Date | "ever" | undefined,
): Promise<string> {
  if (UUID.test(id)) return id.toLowerCase();
  const global = parseGlobalId(id);
  if (global) {
    if (global.type !== type.names.name) {
      throw new EntryNotFoundError(id, "other-type", {
        type: type.names.name,
        actualType: global.type,
      });
    }
    return global.entryUUID;
  }
  if (id.includes("=")) {
    const found = await entryUUIDForDn(context.pool, id, at).catch((error: unknown) => {
      throw locate(error, { parameter: "id" });
    });
    if (found) return found;
    throw await unknownEntry(context, id, { type: type.names.name, at });
  }
  throw new RestError("ANNAL_ID_INVALID", "the ID is not an entryUUID, a global ID or a DN", {
    status: 400,
    hint: "use the entryUUID or id of a search result, or the entry's DN URL-encoded (uid%3Dalice%2Cou%3Dpeople%2C...)",
    details: { parameter: "id" },
  });
}

export function checkType(
  record: { type: string | null },
  type: ServedType,
  id: string,
  at?: Date,
) {
  if (record.type !== type.names.name) {
    throw new EntryNotFoundError(id, "other-type", {
      type: type.names.name,
      actualType: record.type,
      ...(at ? { at } : {}),
    });
  }
}

/**
 * The error for an entry the projections do not know: "unknown" once they hold the whole
 * directory; before (capture's first import still under way), `ANNAL_HISTORY_BUILDING`, 503
 * with `Retry-After`: the entry may be one not imported yet, as a GraphQL search, which reads
 * the directory meanwhile, may have just shown. `at` says which projection was asked: now the
 * entries, a moment or ever the versions.
 */
export async function unknownEntry(
  context: RestContext,
  id: string,
  details: { type?: string; at?: Date | "ever" | undefined },
): Promise<EntryNotFoundError | HistoryBuildingError> {
  const { at, type } = details;
  const moment = at instanceof Date ? { at } : {};
  const typed = type === undefined ? {} : { type };
  if (!(await context.holdsDirectory(at === undefined ? "entries" : "entry_versions"))) {
    return new HistoryBuildingError(id, moment);
  }
  return new EntryNotFoundError(id, "unknown", { ...moment, ...typed });
}

/** The entry now, or `at` a moment, or why there is none. */
async function readEntry(
  context: RestContext,
  uuid: string,
  id: string,
  at: Date | undefined,
): Promise<EntryRecord> {
  if (at) {
    const state = await entryAt(context.pool, uuid, at);
    if (state.found) return state.entry;
    if (state.reason === "unknown") throw await unknownEntry(context, id, { at });
    throw new EntryNotFoundError(id, state.reason, { at, since: state.since });
  }
  const record = await currentEntry(context.pool, uuid);
  if (record) return record;
  const last = await lastVersion(context.pool, uuid);
  if (last?.deleted) throw new EntryNotFoundError(id, "deleted", { since: last.validFrom });
  throw await unknownEntry(context, id, {});
}

/** A weak ETag of the representation itself: it changes exactly when the body would. */
function etagOf(node: unknown): string {
  const digest = createHash("sha256").update(JSON.stringify(node)).digest("base64url");
  return `W/"${digest.slice(0, 27)}"`;
}

/** `If-None-Match` (weak comparison) first; `If-Modified-Since` only without it (RFC 9110 §13.2.2). */
function notModified(request: FastifyRequest, etag: string, lastModified: Date): boolean {
  const noneMatch = request.headers["if-none-match"];
  if (noneMatch !== undefined) {
    const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
    const tags = noneMatch.split(",").map((tag) => tag.trim());
    return tags.includes("*") || tags.some((tag) => opaque(tag) === opaque(etag));
  }
  const since = request.headers["if-modified-since"];
  if (since === undefined) return false;
  const date = Date.parse(since);
  return !Number.isNaN(date) && Math.floor(lastModified.getTime() / 1000) * 1000 <= date;
}

/** `GET /api/entries/{type}/{id}`: one entry, now or `at` a moment, with conditional requests. */
export async function lookupEntry(
  context: RestContext,
  request: FastifyRequest,
  reply: FastifyReply,
  typeSegment: string,
  id: string,
): Promise<unknown> {
  const type = servedType(context, typeSegment);
  const preferences = readPreferences(request.headers.prefer);
  applyPreferences(reply, preferences);
  const params = new QueryParameters(request.query, LOOKUP_PARAMETERS, preferences.handling);
  reportIgnoredParameters(reply, context.log, params.ignored);
  const catalog = await context.catalog();
  const fields = parseFields(params.get("fields"), catalog);
  refuseOrReportUnknown(preferences.handling, { fields: fields.unknown }, reply, context.log);
  const atText = params.get("at");
  const at = atText === undefined ? undefined : parseMoment("at", atText, context.clock());
  if (at) await checkNotBeforeRetention(context.pool, at);
  const uuid = await entryUUIDOf(context, type, id, at);
  const record = await readEntry(context, uuid, id, at);
  checkType(record, type, id, at);
  const node = entryNode(record, type.names.name, fields.selection, catalog);
  const etag = etagOf(node);
  reply
    .header("etag", etag)
    .header("last-modified", record.modifiedAt.toUTCString())
    .header("cache-control", "private, max-age=0, must-revalidate");
  if (notModified(request, etag, record.modifiedAt)) return reply.code(304).send();
  return node;
}

/** `GET /api/entries/{type}/{id}/changes`: one entry's changes, deleted entries' included. */
export async function entryChanges(
  context: RestContext,
  request: FastifyRequest,
  reply: FastifyReply,
  typeSegment: string,
  id: string,
): Promise<unknown> {
  const type = servedType(context, typeSegment);
  const uuid = await entryUUIDOf(context, type, id, "ever");
  const current = await currentEntry(context.pool, uuid);
  const known = current ?? (await lastVersion(context.pool, uuid));
  if (!known) throw await unknownEntry(context, id, { type: type.names.name, at: "ever" });
  checkType(known, type, id);
  return answerChanges(context, request, reply, uuid);
}
