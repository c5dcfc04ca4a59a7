import { assertAccess } from "../../auth/index.ts";
import { AnnalError } from "../../errors/index.ts";
import {
  currentEntry,
  EntryNotFoundError,
  entryUUIDForDn,
  globalId,
  lastVersion,
  membershipsDuring,
  UUID,
  type Period,
} from "../../history/index.ts";
import { type Clock, INTERVAL_FORMS, readInterval } from "../../time/index.ts";
import type { GatewayContext } from "../context.ts";

/**
 * `Query.memberships(entry, during)`: each group the entry (a DN, or its entryUUID) belonged
 * to during the interval (without `during`: ever), with when, whether directly, and through
 * which nested groups, from `entry_versions` (`membershipsDuring`): the answer of the REST
 * channel's `GET /api/entries/{type}/{id}/memberships`, node for node. A deleted entry's
 * memberships are answered too; an entry the history never knew is NOT_FOUND.
 *
 * @example
 * // { memberships(entry: "uid=alice,ou=people,dc=example,dc=org", during: "2026-07-01/2026-10-01")
 * //   { group { dn } during { from to ongoing } direct via } }
 */
export async function memberships(
  context: GatewayContext,
  args: { readonly entry?: unknown; readonly during?: unknown },
) {
  assertAccess(context.viewer, "read");
  const entry = typeof args.entry === "string" ? args.entry : "";
  const period =
    typeof args.during === "string"
      ? periodArgument(args.during, context.clock())
      : { start: undefined, end: undefined };
  const uuid = UUID.test(entry)
    ? entry.toLowerCase()
    : await entryUUIDForDn(context.history, entry, "ever");
  const known =
    uuid !== undefined &&
    ((await currentEntry(context.history, uuid)) ?? (await lastVersion(context.history, uuid)));
  if (!known) throw new EntryNotFoundError(entry, "unknown");
  const found = await membershipsDuring(context.history, uuid, period);
  return found.map((membership) => ({
    group: {
      id: membership.type === null ? null : globalId(membership.type, membership.groupUUID),
      entryUUID: membership.groupUUID,
      dn: membership.dn,
      type: membership.type,
    },
    during: membership.spans.map((span) => ({
      from: span.from.toISOString(),
      to: span.to?.toISOString() ?? null,
      ongoing: span.ongoing,
    })),
    direct: membership.direct,
    via: membership.via,
  }));
}

/**
 * `during` in the grammar of `src/time/`, read as the REST channel reads it, with its codes:
 * `ANNAL_INTERVAL_REVERSED` for an end before the start, `ANNAL_INTERVAL_INVALID` otherwise.
 */
function periodArgument(text: string, clock: Clock): Period {
  const reading = readInterval(text, clock);
  if (reading.interval) return reading.interval;
  const { problem } = reading;
  if (problem.kind === "reversed") {
    throw new AnnalError("ANNAL_INTERVAL_REVERSED", `during: ${problem.message}`, {
      hint: "give the earlier moment first; an interval is half-open, [start, end)",
      details: {
        parameter: "during",
        start: problem.start.toISOString(),
        end: problem.end.toISOString(),
      },
    });
  }
  throw new AnnalError("ANNAL_INTERVAL_INVALID", `during: ${problem.message}`, {
    hint: `write ${INTERVAL_FORMS}`,
    details: { parameter: "during", expected: INTERVAL_FORMS },
  });
}
