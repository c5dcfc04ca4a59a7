import type { GraphQLSchema } from "graphql";
import { delegateDialogs, endOne, myDelegations } from "./delegations.ts";
import { answer, myDialogs } from "./dialogs.ts";
import type { Resolver } from "./engine.ts";
import { failedWork } from "./failed-work.ts";
import { changes } from "./feed.ts";
import { cancel, instance, instances, retry } from "./instances.ts";
import { memberships } from "./memberships.ts";

import {
  decide,
  membershipReviews,
  reviewCampaign,
  reviewCampaigns,
  reviewReport,
  startReview,
  unreviewed,
} from "./reviews.ts";
import { simulate } from "./simulate.ts";
import { catalog, start } from "./workflows.ts";

/**
 * The operations of `schema/workflows.graphql`, one file per family: the catalog and starts
 * (`workflows.ts`), instances now and at a moment and their commands (`instances.ts`), the
 * inbox (`dialogs.ts`), delegations (`delegations.ts`), the change feed (`feed.ts`) and failed work (`failed-work.ts`). They
 * read through the workflow module's read API and only map its views (`nodes.ts`). Beside
 * them, `schema/history.graphql`'s memberships over time (`memberships.ts`), read through the
 * history module.
 *
 * Every refusal is the engine's own `WorkflowRefusal` (`WF_NOT_FOUND`, `WF_FORBIDDEN`,
 * `WF_CONFLICT`, `WF_LOCKED`, `WF_VALIDATION`) or the account's (`WF_AUTHORIZATION_DENIED`,
 * `AUTHORIZATION_PRINCIPAL_LIMIT_EXCEEDED`), and reaches `extensions.code` unchanged.
 */

/** Gives the workflow fields of Query and Mutation their resolvers, where the schema has them. */
export function attachWorkflowResolvers(schema: GraphQLSchema): void {
  const attach = (type: string, resolvers: Record<string, Resolver>) => {
    const fields = (
      schema.getType(type) as { getFields?: () => Record<string, unknown> }
    )?.getFields?.();
    if (!fields) return;
    for (const [name, resolve] of Object.entries(resolvers)) {
      const field = fields[name] as { resolve?: unknown } | undefined;
      if (field) field.resolve = resolve;
    }
  };
  attach("Query", {
    workflows: (_parent, _args, context) => catalog(context),
    instances: (_parent, args, context) => instances(context, args),
    instance: (_parent, args, context) => instance(context, args),
    myDialogs: (_parent, args, context) => myDialogs(context, args),
    changes: (_parent, args, context) => changes(context, args),
    failedWork: (_parent, args, context) => failedWork(context, args),
    myDelegations: (_parent, _args, context) => myDelegations(context),
    memberships: (_parent, args, context) => memberships(context, args),
    simulateWorkflow: (_parent, args, context) => simulate(context, args),
    reviewCampaigns: (_parent, args, context) => reviewCampaigns(context, args),
    reviewCampaign: (_parent, args, context) => reviewCampaign(context, args),
    membershipReviews: (_parent, args, context) => membershipReviews(context, args),
    unreviewedMemberships: (_parent, args, context) => unreviewed(context, args),
    reviewReport: (_parent, args, context) => reviewReport(context, args),
  });
  attach("Mutation", {
    startWorkflow: (_parent, args, context) => start(context, args),
    completeDialog: (_parent, args, context) => answer(context, args),
    cancelInstance: (_parent, args, context) => cancel(context, args),
    retryInstance: (_parent, args, context) => retry(context, args),
    delegateDialogs: (_parent, args, context) => delegateDialogs(context, args),
    endDelegation: (_parent, args, context) => endOne(context, args),
    startReview: (_parent, args, context) => startReview(context, args),
    decideReviewItems: (_parent, args, context) => decide(context, args),
  });
}
