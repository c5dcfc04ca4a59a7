import type { Cause } from "./types.ts";

/** A cause as GraphQL gives it: one of the union's members, by `__typename`. */
export interface GraphqlCause {
  readonly __typename: string;
  readonly id: string;
  readonly instanceId?: string;
  readonly workflow?: string;
  readonly step?: string;
  readonly attempt?: number;
  readonly approvedBy?: { readonly name: string; readonly dn?: string | null } | null;
  readonly webhook?: string;
  readonly source?: string;
  readonly eventId?: string;
  readonly subject?: string;
  readonly requestId?: string;
  readonly account?: string;
  readonly type?: string;
}

export const CAUSE_FIELDS = `cause { __typename
  ... on WorkflowCause { id instanceId workflow step attempt approvedBy { name dn } }
  ... on ChangeEventCause { id webhook source eventId subject }
  ... on MutationCause { id requestId account }
  ... on EventCause { id type } }`;

/** GraphQL's typed cause as the REST channel's `cause`, to show both the same way. */
export function causeFromGraphql(c: GraphqlCause | null): Cause | null {
  if (!c) return null;
  switch (c.__typename) {
    case "WorkflowCause":
      return {
        kind: "workflow",
        id: c.id,
        instanceId: c.instanceId ?? "",
        workflow: c.workflow ?? "",
        step: c.step ?? "",
        attempt: c.attempt ?? 0,
        approvedBy: c.approvedBy
          ? { accountId: "", name: c.approvedBy.name, dn: c.approvedBy.dn ?? null }
          : null,
      };
    case "ChangeEventCause":
      return {
        kind: "changeEvent",
        id: c.id,
        webhook: c.webhook ?? "",
        source: c.source ?? "",
        eventId: c.eventId ?? "",
        subject: c.subject ?? "",
      };
    case "MutationCause":
      return { kind: "mutation", id: c.id, requestId: c.requestId ?? "", account: c.account ?? "" };
    default:
      return { kind: "event", id: c.id, type: c.type ?? c.__typename };
  }
}
