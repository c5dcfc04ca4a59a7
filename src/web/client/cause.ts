import { h, link } from "./dom.ts";
import { personView } from "./names.ts";
import type { Cause } from "./types.ts";

/** Why a change was made, in words, with a link to the workflow instance behind it. */
export function causeView(cause: Cause | null): HTMLElement {
  if (!cause) return h("span", { class: "cause none" }, "made in the directory");
  switch (cause.kind) {
    case "workflow":
      return h(
        "span",
        { class: "cause workflow" },
        "workflow ",
        link(`/app/instances/${encodeURIComponent(cause.instanceId)}`, cause.workflow),
        `, step “${cause.step}”`,
        cause.approvedBy
          ? [
              ", approved by ",
              h(
                "strong",
                { class: "approver" },
                personView(cause.approvedBy.dn, cause.approvedBy.name),
              ),
            ]
          : null,
      );
    case "changeEvent":
      return h(
        "span",
        { class: "cause change-event" },
        `change event ${cause.eventId} from ${cause.source} (webhook ${cause.webhook}) about ${cause.subject}`,
      );
    case "mutation":
      return h("span", { class: "cause mutation" }, `GraphQL mutation for ${cause.account}`);
    default:
      return h("span", { class: "cause event" }, `event ${cause.type}`);
  }
}

/** Who made a change: by display name, the whole DN on hover. */
export function actorView(actor: string | null): HTMLElement {
  return h("span", { class: "actor" }, personView(actor));
}
