import { gql } from "../api.ts";
import { actorView, causeView } from "../cause.ts";
import { DEADLINE_WORDS, deadlineStatus } from "../deadlines.ts";
import { errorBox, fill, h, link, time, type Child } from "../dom.ts";
import { CAUSE_FIELDS, causeFromGraphql, type GraphqlCause } from "../graphql-cause.ts";
import { personView } from "../names.ts";
import type { PageContext } from "../router.ts";
import {
  assigneeView,
  ESCALATION_FIELDS,
  escalationView,
  joinViews,
  type EscalationNode,
} from "../escalation.ts";
import { dataView, deadline } from "../workflow-data.ts";
import { INSTANCE_LIST_FIELDS, instanceActions, type InstanceListNode } from "./instances.ts";

/** How often the page of a running or waiting instance asks for its news. */
export const INSTANCE_POLL_MS = 2000;

const LIVE_STATES = new Set(["RUNNING", "WAITING"]);

interface InstanceDetail extends InstanceListNode {
  parameters: unknown;
  result: unknown;
  until: string | null;
  parent: { id: string; workflow: string } | null;
  steps: {
    seq: number;
    kind: string;
    name: string;
    state: string;
    attempts: number | null;
    startedAt: string | null;
    endedAt: string | null;
    error: { code: string; message: string } | null;
    actingFor: { name: string; dn: string | null } | null;
  }[];
  dialogs: {
    id: string;
    name: string;
    state: string;
    until: string | null;
    assignees: string[];
    answer: unknown;
    answeredBy: { name: string; dn: string | null } | null;
    openedAt: string;
    endedAt: string | null;
    escalation: EscalationNode | null;
  }[];
  children: { id: string; workflow: string; state: string }[];
  deadlines: {
    kind: string;
    seq: number | null;
    name: string | null;
    dueAt: string;
    passed: boolean;
  }[];
  events: { id: string; type: string; version: number; occurredAt: string }[];
  directoryChanges: {
    nodes: {
      id: string;
      dn: string;
      changeType: string;
      occurredAt: string;
      actor: string | null;
      attributes: string[];
      cause: GraphqlCause | null;
    }[];
  };
}

const INSTANCE_QUERY = `query($id: ID!) { instance(id: $id) { ${INSTANCE_LIST_FIELDS} parameters result until parent { id workflow }
  steps { seq kind name state attempts startedAt endedAt error { code message } actingFor { name dn } }
  dialogs { id name state until assignees answer answeredBy { name dn } openedAt endedAt ${ESCALATION_FIELDS} }
  children { id workflow state }
  deadlines { kind seq name dueAt passed }
  events { id type version occurredAt }
  directoryChanges(first: 100) { nodes { id dn changeType occurredAt actor attributes ${CAUSE_FIELDS} } } } }`;

/** Who must act now: the open dialogs' assignees, each dialog with its deadline. */
function waitingOn(i: InstanceDetail): HTMLElement | null {
  const open = i.dialogs.filter((d) => d.state === "pending");
  if (!LIVE_STATES.has(i.state) || open.length === 0) return null;
  return h(
    "div",
    { class: "waiting-on", id: "waiting-on", role: "status" },
    h("h2", null, "Who must act now"),
    h(
      "ul",
      null,
      ...open.map((d) =>
        h(
          "li",
          { "data-dialog": d.id },
          `“${d.name}” waits for `,
          ...joinViews(d.assignees.map(assigneeView)),
          " · ",
          deadline(d.until),
        ),
      ),
    ),
  );
}

function stepsTable(i: InstanceDetail): HTMLElement {
  return h(
    "table",
    { class: "results", id: "instance-steps" },
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        ...[
          "#",
          "Kind",
          "Name",
          "State",
          "Attempts",
          "Started",
          "Ended",
          "Acting for",
          "Error",
        ].map((c) => h("th", { scope: "col" }, c)),
      ),
    ),
    h(
      "tbody",
      null,
      ...i.steps.map((s) =>
        h(
          "tr",
          null,
          h("td", null, s.seq),
          h("td", null, s.kind),
          h("td", null, s.name),
          h("td", null, s.state),
          h("td", null, s.attempts ?? ""),
          h("td", null, time(s.startedAt)),
          h("td", null, time(s.endedAt)),
          h("td", null, s.actingFor ? personView(s.actingFor.dn, s.actingFor.name) : ""),
          h("td", null, s.error ? `${s.error.code}: ${s.error.message}` : ""),
        ),
      ),
    ),
  );
}

function deadlinesList(i: InstanceDetail): HTMLElement {
  return h(
    "ul",
    { id: "instance-deadlines" },
    ...i.deadlines.map((d) => {
      const status = deadlineStatus(d, i.steps, i);
      return h(
        "li",
        { class: `deadline-${status}`, "data-status": status },
        `${d.kind}${d.name ? ` “${d.name}”` : ""}: due `,
        time(d.dueAt),
        " — ",
        h("strong", { class: "deadline-status" }, DEADLINE_WORDS[status]),
      );
    }),
  );
}

function instanceView(i: InstanceDetail, context: PageContext, redraw: () => void): Child[] {
  // Who acted on the instance, by account name: a result's `decidedBy: "prossi"` by name.
  const people = new Map<string, string | null>();
  for (const actor of [
    i.startedBy,
    ...i.dialogs.map((d) => d.answeredBy),
    ...i.steps.map((step) => step.actingFor),
  ]) {
    if (actor?.dn) people.set(actor.name, actor.dn);
  }
  const { viewer } = context;
  return [
    h("p", { class: "crumbs" }, link("/app/instances", "Instances")),
    h(
      "h1",
      null,
      `${i.workflow} `,
      h("span", { class: `state ${i.state.toLowerCase()}`, id: "instance-state" }, i.state),
    ),
    LIVE_STATES.has(i.state)
      ? h(
          "p",
          { class: "hint", id: "instance-live" },
          `This page updates itself every ${INSTANCE_POLL_MS / 1000} seconds while the instance runs.`,
        )
      : null,
    waitingOn(i),
    h(
      "dl",
      { class: "data" },
      h("dt", null, "Instance"),
      h("dd", null, i.id),
      h("dt", null, "Started"),
      h("dd", null, time(i.startedAt), " by ", personView(i.startedBy.dn, i.startedBy.name)),
      h("dt", null, "Updated"),
      h("dd", null, time(i.updatedAt)),
      i.parent
        ? [
            h("dt", null, "Parent"),
            h("dd", null, link(`/app/instances/${i.parent.id}`, i.parent.workflow)),
          ]
        : null,
      i.error
        ? [
            h("dt", null, "Error"),
            h("dd", { class: "error-text" }, `${i.error.code}: ${i.error.message}`),
          ]
        : null,
    ),
    instanceActions(i, redraw, viewer.access.has("operator")),
    h("h2", null, "Parameters"),
    dataView(i.parameters, people) ?? h("p", null, "None."),
    i.result !== null ? [h("h2", null, "Result"), dataView(i.result, people)] : null,
    h("h2", null, "Steps"),
    stepsTable(i),
    i.dialogs.length
      ? [
          h("h2", null, "Dialogs"),
          h(
            "ul",
            { id: "instance-dialogs" },
            ...i.dialogs.map((d) =>
              h(
                "li",
                null,
                `${d.name}: ${d.state}`,
                d.answeredBy ? [" by ", personView(d.answeredBy.dn, d.answeredBy.name)] : "",
                d.state === "pending" ? [" · ", deadline(d.until)] : null,
                d.answer !== null ? dataView(d.answer, people) : null,
                d.escalation ? escalationView(d.escalation, d) : null,
              ),
            ),
          ),
        ]
      : null,
    i.deadlines.length ? [h("h2", null, "Deadlines"), deadlinesList(i)] : null,
    i.children.length
      ? [
          h("h2", null, "Children"),
          h(
            "ul",
            null,
            ...i.children.map((c) =>
              h(
                "li",
                null,
                link(`/app/instances/${c.id}`, c.workflow),
                " ",
                h("span", { class: `state ${c.state.toLowerCase()}` }, c.state),
              ),
            ),
          ),
        ]
      : null,
    h("h2", null, "Directory changes it made"),
    i.directoryChanges.nodes.length === 0
      ? h("p", null, "None.")
      : h(
          "ol",
          { class: "timeline", id: "instance-changes" },
          ...i.directoryChanges.nodes.map((c) =>
            h(
              "li",
              { class: "change" },
              h("div", { class: "when" }, time(c.occurredAt)),
              h(
                "div",
                { class: "what" },
                h("strong", null, c.changeType),
                " ",
                personView(c.dn),
                ` (${c.attributes.join(", ")})`,
              ),
              h("div", { class: "who" }, "by ", actorView(c.actor)),
              h("div", { class: "why" }, "why: ", causeView(causeFromGraphql(c.cause))),
            ),
          ),
        ),
    h("h2", null, "Events"),
    h(
      "ol",
      { class: "timeline events", id: "instance-events" },
      ...i.events.map((e) =>
        h(
          "li",
          null,
          h("div", { class: "when" }, time(e.occurredAt)),
          h("div", { class: "what" }, `${e.version}. ${e.type}`),
        ),
      ),
    ),
  ];
}

/**
 * `/app/instances/:id`: state, who must act now, steps, dialogs, deadlines (met or not),
 * children, events and the directory changes it made. While the instance runs or waits the
 * page asks for it again every few seconds and redraws what changed.
 */
export async function instancePage(context: PageContext): Promise<void> {
  const { main, params, signal } = context;
  const load = async () =>
    (await gql<{ instance: InstanceDetail | null }>(INSTANCE_QUERY, { id: params.id })).instance;
  let instance: InstanceDetail | null;
  try {
    instance = await load();
  } catch (error) {
    fill(main, h("h1", null, "Instance"), errorBox(error));
    return;
  }
  if (!instance) {
    fill(main, h("h1", null, "Instance"), h("p", { role: "alert" }, "No such instance."));
    return;
  }
  let shown = instance;
  const draw = () => fill(main, ...instanceView(shown, context, () => void poll(true)));
  const poll = async (now = false) => {
    if (signal.aborted) return;
    if (now || document.visibilityState === "visible") {
      try {
        const fresh = await load();
        if (signal.aborted) return;
        // Only news is drawn again: a page the person reads does not jump for nothing.
        if (
          fresh &&
          (fresh.updatedAt !== shown.updatedAt ||
            fresh.state !== shown.state ||
            fresh.events.length !== shown.events.length ||
            fresh.directoryChanges.nodes.length !== shown.directoryChanges.nodes.length)
        ) {
          shown = fresh;
          const scroll = window.scrollY;
          draw();
          window.scrollTo(0, scroll);
        }
      } catch {
        // A lost connection is the banner's to say; the next poll tries again.
      }
    }
    if (!signal.aborted && LIVE_STATES.has(shown.state)) {
      setTimeout(() => void poll(), INSTANCE_POLL_MS);
    }
  };
  draw();
  if (LIVE_STATES.has(shown.state)) setTimeout(() => void poll(), INSTANCE_POLL_MS);
}
