import { checkNotBeforeRetention } from "../../audit/index.ts";
import type { FastifyReply, FastifyRequest } from "fastify";
import { currentEntry, globalId, lastVersion, membershipsDuring } from "../../history/index.ts";
import { applyPreferences, servedType, type RestContext } from "../context.ts";
import { reportIgnoredParameters } from "../leniency.ts";
import { QueryParameters } from "../params.ts";
import { readPreferences } from "../prefer.ts";
import { parseInterval } from "../time.ts";
import { checkType, entryUUIDOf, unknownEntry } from "./entry.ts";
import { spanNode } from "./search-during.ts";

export const MEMBERSHIP_PARAMETERS = ["during"] as const;

/**
 * `GET /api/entries/{type}/{id}/memberships?during=<start>/<end>`: each group the entry
 * belonged to during the interval (without `during`: ever), with when (`during`: from, to,
 * and whether it went on past `to`),
 * whether directly, and through which nested groups (`via`), from `entry_versions`
 * (`membershipsDuring`). A deleted entry's memberships are answered too.
 */
export async function entryMemberships(
  context: RestContext,
  request: FastifyRequest,
  reply: FastifyReply,
  typeSegment: string,
  id: string,
): Promise<unknown> {
  const type = servedType(context, typeSegment);
  const preferences = readPreferences(request.headers.prefer);
  applyPreferences(reply, preferences);
  const params = new QueryParameters(request.query, MEMBERSHIP_PARAMETERS, preferences.handling);
  reportIgnoredParameters(reply, context.log, params.ignored);
  const duringText = params.get("during");
  const period =
    duringText === undefined
      ? { start: undefined, end: undefined }
      : parseInterval("during", duringText, context.clock());
  if (period.start) await checkNotBeforeRetention(context.pool, period.start, "during");
  const uuid = await entryUUIDOf(context, type, id, "ever");
  const known = (await currentEntry(context.pool, uuid)) ?? (await lastVersion(context.pool, uuid));
  if (!known) throw await unknownEntry(context, id, { type: type.names.name, at: "ever" });
  checkType(known, type, id);
  const memberships = await membershipsDuring(context.pool, uuid, period);
  reply.header("cache-control", "no-store");
  return {
    nodes: memberships.map((membership) => ({
      group: {
        id: membership.type === null ? null : globalId(membership.type, membership.groupUUID),
        entryUUID: membership.groupUUID,
        dn: membership.dn,
        type: membership.type,
      },
      during: membership.spans.map((span) => ({ ...spanNode(span), ongoing: span.ongoing })),
      direct: membership.direct,
      via: membership.via,
    })),
  };
}
