import type { FastifyReply, FastifyRequest } from "fastify";
import type { Operation } from "rfc6902";
import { readStoredText } from "../../capture/index.ts";
import type { ChangeType } from "../../events/index.ts";
import {
  changeFeed,
  countChanges,
  globalId,
  type ChangeFilter,
  type ChangeRecord,
} from "../../history/index.ts";
import type { LogPosition } from "../../store/index.ts";
import { applyPreferences, readInclude, type RestContext } from "../context.ts";
import { RestError } from "../errors.ts";
import { refuseOrReportUnknown, reportIgnoredParameters } from "../leniency.ts";
import { PAGE_PARAMETERS, pageInfo, readPage } from "../pagination.ts";
import { commaList, QueryParameters } from "../params.ts";
import { readPreferences, type Preferences } from "../prefer.ts";
import { changeWindow, conflict, parseInterval, parseMoment, parseSpan } from "../time.ts";

export const CHANGE_PARAMETERS = [
  ...PAGE_PARAMETERS,
  "range",
  "since",
  "during",
  "type",
  "affects",
  "adds",
  "entryType",
  "actor",
  "include",
] as const;

const CHANGE_PARTS = ["nodes", "patch", "pageInfo", "count"] as const;

const CHANGE_TYPES: Readonly<Record<string, ChangeType>> = {
  add: "add",
  modify: "modify",
  modrdn: "modrdn",
  moddn: "modrdn",
  rename: "modrdn",
  delete: "delete",
};

/** A change as the channel serves it. */
export function changeNode(
  context: RestContext,
  change: ChangeRecord,
  withPatch: boolean,
): Record<string, unknown> {
  return {
    cursor: context.codec.encode("changes", "", [change.transactionId, change.position]),
    changeId: change.eventId,
    entryUUID: change.entryUUID,
    id: change.entryType === null ? null : globalId(change.entryType, change.entryUUID),
    dn: change.dn,
    oldDn: change.oldDn,
    type: change.changeType,
    entryType: change.entryType,
    occurredAt: change.occurredAt.toISOString(),
    recordedAt: change.recordedAt.toISOString(),
    actor: change.actor,
    attributes: change.attributes,
    cause: change.cause,
    ...(withPatch
      ? { patch: withoutRedacted(context, change.patch ?? []).map(withStoredTextRead) }
      : {}),
  };
}

/** The redacted attributes in lower case, made once per channel rather than once per change. */
const lowerCaseRedacted = new WeakMap<readonly string[], ReadonlySet<string>>();

/** Capture never records a redacted value; should one be in a patch all the same, drop it. */
function withoutRedacted(context: RestContext, patch: readonly Operation[]): readonly Operation[] {
  let redacted = lowerCaseRedacted.get(context.redacted);
  if (!redacted) {
    redacted = new Set(context.redacted.map((name) => name.toLowerCase()));
    lowerCaseRedacted.set(context.redacted, redacted);
  }
  if (redacted.size === 0) return patch;
  const attributeOf = (path: string) =>
    (path.split("/")[1] ?? "").replaceAll("~1", "/").replaceAll("~0", "~").split(";")[0]!;
  return patch.filter(
    (operation) =>
      !redacted.has(attributeOf(operation.path).toLowerCase()) &&
      !("from" in operation && redacted.has(attributeOf(operation.from).toLowerCase())),
  );
}

/** A patch operation with its values as the directory holds them (see `readStoredText`). */
function withStoredTextRead(operation: Operation): Operation {
  if (!("value" in operation)) return operation;
  const read = (value: unknown): unknown =>
    typeof value === "string"
      ? readStoredText(value)
      : Array.isArray(value)
        ? value.map(read)
        : value;
  return { ...operation, value: read(operation.value) } as Operation;
}

function positionOf(parameter: string, value: unknown): LogPosition {
  if (
    Array.isArray(value) &&
    value.length === 2 &&
    typeof value[0] === "string" &&
    /^\d{1,20}$/.test(value[0]) &&
    Number.isSafeInteger(value[1])
  ) {
    return { transactionId: value[0], position: value[1] as number };
  }
  throw new RestError("ANNAL_CURSOR_INVALID", `${parameter}: the cursor is not valid`, {
    hint: "pass a cursor exactly as annal returned it",
    details: { parameter },
  });
}

/** The conditions of `since`, `range`, `type`, `entryType`, `actor`, `affects` and `adds`. */
async function readChangeFilter(
  context: RestContext,
  params: QueryParameters,
  preferences: Preferences,
  reply: FastifyReply,
): Promise<ChangeFilter> {
  const clock = context.clock();
  const since = params.get("since");
  const range = params.get("range");
  const during = params.get("during");
  if (during !== undefined && (since !== undefined || range !== undefined)) {
    throw conflict(
      "during",
      since === undefined ? "range" : "since",
      "give the changes' period either as during=<start>/<end> or with since and range",
    );
  }
  const interval = during === undefined ? undefined : parseInterval("during", during, clock);
  const window = interval
    ? {
        ...(interval.start ? { from: interval.start } : {}),
        ...(interval.end ? { to: interval.end } : {}),
      }
    : changeWindow(
        since === undefined ? undefined : parseMoment("since", since, clock),
        range === undefined ? undefined : parseSpan("range", range),
        clock,
      );
  const filter: { -readonly [K in keyof ChangeFilter]: ChangeFilter[K] } = { ...window };
  const type = params.get("type");
  if (type !== undefined) {
    const kinds = commaList(type);
    const wrong = kinds.filter((kind) => CHANGE_TYPES[kind.toLowerCase()] === undefined);
    if (wrong.length > 0 || kinds.length === 0) {
      throw new RestError(
        "ANNAL_PARAMETER_INVALID",
        `type: ${wrong.map((kind) => JSON.stringify(kind)).join(", ")} is not a kind of change`,
        {
          hint: "type takes add, modify, modrdn (or rename) and delete, comma-separated",
          details: { parameter: "type", expected: ["add", "modify", "modrdn", "delete"] },
        },
      );
    }
    filter.types = [...new Set(kinds.map((kind) => CHANGE_TYPES[kind.toLowerCase()]!))];
  }
  const affects = params.get("affects");
  if (affects !== undefined) {
    const catalog = await context.catalog();
    const unknown: string[] = [];
    filter.affects = commaList(affects).map((name) => {
      const known =
        catalog.resolve(name)?.name ??
        context.redacted.find((redacted) => redacted.toLowerCase() === name.toLowerCase());
      if (known === undefined) unknown.push(name);
      return known ?? name;
    });
    refuseOrReportUnknown(preferences.handling, { affects: unknown }, reply, context.log);
  }
  const entryType = params.get("entryType");
  if (entryType !== undefined) {
    // A type by its configured name (`user`) or its path (`users`).
    const served = [...context.types.values()];
    const wanted = commaList(entryType);
    const unknown = wanted.filter(
      (name) =>
        !served.some(
          (type) =>
            type.names.name.toLowerCase() === name.toLowerCase() ||
            type.names.path === name.toLowerCase(),
        ),
    );
    if (unknown.length > 0 || wanted.length === 0) {
      throw new RestError(
        "ANNAL_PARAMETER_INVALID",
        `entryType: ${unknown.map((name) => JSON.stringify(name)).join(", ")} is not a configured entry type`,
        {
          hint: `entryType takes ${served.map((type) => type.names.name).join(", ")}, comma-separated`,
          details: { parameter: "entryType", expected: served.map((type) => type.names.name) },
        },
      );
    }
    filter.entryTypes = served
      .filter((type) =>
        wanted.some(
          (name) =>
            type.names.name.toLowerCase() === name.toLowerCase() ||
            type.names.path === name.toLowerCase(),
        ),
      )
      .map((type) => type.names.name);
  }
  const actor = params.get("actor");
  if (actor !== undefined) filter.actor = actor;
  const adds = params.get("adds");
  if (adds !== undefined) {
    if (adds.trim() === "" || adds.length > 1000) {
      throw new RestError("ANNAL_PARAMETER_INVALID", "adds: a value of 1 to 1,000 characters", {
        hint: "adds takes one value, e.g. a person's DN with affects=member for their groups",
        details: { parameter: "adds" },
      });
    }
    filter.adds = adds;
  }
  return filter;
}

/**
 * The change feed (`GET /api/changes`) or one entry's changes (`entryUUID`): a page in the
 * order the changes were recorded, from the `changes` projection.
 */
export async function answerChanges(
  context: RestContext,
  request: FastifyRequest,
  reply: FastifyReply,
  entryUUID?: string,
  preferences: Preferences = readPreferences(request.headers.prefer),
): Promise<Record<string, unknown>> {
  applyPreferences(reply, preferences);
  const params = new QueryParameters(request.query, CHANGE_PARAMETERS, preferences.handling);
  reportIgnoredParameters(reply, context.log, params.ignored);
  const filter = {
    ...(await readChangeFilter(context, params, preferences, reply)),
    ...(entryUUID === undefined ? {} : { entryUUID }),
  };
  const include = readInclude(params.get("include"), CHANGE_PARTS, ["nodes", "pageInfo"]);
  const withPatch = include.has("patch");
  const page = readPage(params, context.config);
  let cursor: LogPosition | undefined;
  if (page.cursor) {
    const { parameter, value } = page.cursor;
    cursor = positionOf(parameter, context.codec.decode(parameter, value, "changes", ""));
  }
  reply.header("cache-control", "no-store");
  const body: Record<string, unknown> = {};
  if (include.has("nodes") || withPatch || include.has("pageInfo")) {
    const result = await changeFeed(context.pool, filter, {
      direction: page.direction,
      limit: page.limit,
      withPatch,
      ...(cursor === undefined
        ? {}
        : page.direction === "forward"
          ? { after: cursor }
          : { before: cursor }),
    });
    const nodes = result.changes.map((change) => changeNode(context, change, withPatch));
    if (include.has("nodes") || withPatch) body.nodes = nodes;
    if (include.has("pageInfo")) {
      body.pageInfo = pageInfo(page, result, {
        start: (nodes[0]?.cursor as string | undefined) ?? null,
        end: (nodes.at(-1)?.cursor as string | undefined) ?? null,
      });
    }
  }
  if (include.has("count")) body.count = await countChanges(context.pool, filter);
  return body;
}
