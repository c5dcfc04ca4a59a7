import { gql, query } from "../api.ts";
import { actorView, causeView } from "../cause.ts";
import { announce, errorBox, fill, h, link, time } from "../dom.ts";
import { navigate, type PageContext } from "../router.ts";
import { schemaForm, type JsonSchema } from "../schema-form.ts";
import type { Cause } from "../types.ts";

interface DialogNode {
  id: string;
  name: string;
  workflow: string;
  state: string;
  form: JsonSchema | null;
  data: unknown;
  until: string | null;
  openedAt: string;
  assignees: string[];
  instance: { id: string; startedBy: { name: string } } | null;
}

const DIALOG_FIELDS = `id name workflow state form data until openedAt assignees instance { id startedBy { name } }`;

/**
 * What a workflow shows with its question, as a definition list: an object inside as a list of
 * its own (`requester: { name, dn }`), a list of texts one per line, other shapes as JSON.
 */
function dataView(data: unknown): HTMLElement | null {
  if (data === null || data === undefined) return null;
  if (typeof data === "object" && !Array.isArray(data)) {
    const value = (item: unknown): HTMLElement | string =>
      typeof item === "string"
        ? item
        : typeof item === "object" && item !== null && !Array.isArray(item)
          ? (dataView(item) ?? "")
          : Array.isArray(item) && item.every((v) => typeof v === "string")
            ? h("div", null, ...item.map((v) => h("div", { class: "value" }, v)))
            : JSON.stringify(item);
    return h(
      "dl",
      { class: "data" },
      ...Object.entries(data as Record<string, unknown>).flatMap(([key, item]) => [
        h("dt", null, key),
        h("dd", null, value(item)),
      ]),
    );
  }
  return h("pre", { class: "code" }, JSON.stringify(data, null, 2));
}

/** A deadline: the moment, and whether it has passed. */
function deadline(until: string | null): HTMLElement | string {
  if (!until) return "no deadline";
  const passed = Date.parse(until) < Date.now();
  return h(
    "span",
    { class: passed ? "deadline passed" : "deadline" },
    passed ? "was due " : "due ",
    time(until),
  );
}

/** `/app/inbox`: the viewer's open dialogs, oldest first, each with its form. */
export async function inboxPage({ main }: PageContext): Promise<void> {
  fill(main, h("h1", null, "Inbox"), h("p", { class: "loading" }, "Loading…"));
  let dialogs: DialogNode[];
  try {
    dialogs = (
      await gql<{ myDialogs: { nodes: DialogNode[] } }>(
        `{ myDialogs(first: 100) { nodes { ${DIALOG_FIELDS} } } }`,
      )
    ).myDialogs.nodes;
  } catch (error) {
    fill(main, h("h1", null, "Inbox"), errorBox(error));
    return;
  }
  fill(
    main,
    h("h1", null, "Inbox"),
    dialogs.length === 0
      ? h("p", { id: "inbox-empty" }, "Nothing waits for you.")
      : h(
          "ul",
          { class: "cards", id: "inbox" },
          ...dialogs.map((dialog) =>
            h("li", { class: "card", "data-dialog": dialog.id }, dialogCard(dialog)),
          ),
        ),
  );
  announce(`${dialogs.length} open ${dialogs.length === 1 ? "question" : "questions"}`);
}

function dialogCard(dialog: DialogNode): HTMLElement {
  const form = schemaForm(dialog.form);
  const result = h("div", { class: "result", "aria-live": "polite" });
  const submit = h("button", { type: "submit" }, "Send answer");
  const element = h(
    "form",
    { class: "dialog", "aria-label": `${dialog.workflow}: ${dialog.name}` },
    h("h2", null, `${dialog.workflow}: ${dialog.name}`),
    h(
      "p",
      { class: "meta" },
      dialog.instance
        ? [
            "asked by ",
            dialog.instance.startedBy.name,
            " in ",
            link(`/app/instances/${dialog.instance.id}`, "the instance"),
            " · ",
          ]
        : null,
      "opened ",
      time(dialog.openedAt),
      " · ",
      deadline(dialog.until),
    ),
    dataView(dialog.data),
    form.element,
    submit,
    result,
  );
  element.addEventListener("submit", (event) => {
    event.preventDefault();
    void (async () => {
      submit.disabled = true;
      try {
        const answered = await gql<{ completeDialog: { id: string; state: string } }>(
          `mutation($id: ID!, $answer: JSON!) { completeDialog(id: $id, answer: $answer) { id state } }`,
          { id: dialog.id, answer: form.value() },
        );
        fill(
          result,
          h(
            "p",
            { class: "ok", role: "status" },
            `Answered: the question is ${answered.completeDialog.state}.`,
          ),
        );
        element.classList.add("answered");
        for (const control of element.querySelectorAll("input, select, textarea, button"))
          (control as HTMLInputElement).disabled = true;
      } catch (error) {
        fill(result, errorBox(error));
        submit.disabled = false;
      }
    })();
  });
  return element;
}

interface Definition {
  name: string;
  title: string;
  version: number;
  parameters: JsonSchema | null;
  startAccess: string[];
}

/** `/app/workflows`: what the viewer may start; each opens its form. */
export async function catalogPage({ main }: PageContext): Promise<void> {
  try {
    const { workflows } = await gql<{ workflows: Definition[] }>(
      `{ workflows { name title version startAccess } }`,
    );
    fill(
      main,
      h("h1", null, "Start a workflow"),
      workflows.length === 0
        ? h("p", null, "No workflow is deployed that you may start.")
        : h(
            "ul",
            { class: "cards", id: "catalog" },
            ...workflows.map((w) =>
              h(
                "li",
                { class: "card" },
                h("h2", null, link(`/app/workflows/${encodeURIComponent(w.name)}`, w.title)),
                h("p", { class: "meta" }, `${w.name}, version ${w.version}`),
              ),
            ),
          ),
    );
  } catch (error) {
    fill(main, h("h1", null, "Start a workflow"), errorBox(error));
  }
}

/** `/app/workflows/:name`: the start form, generated from the parameters' JSON Schema. */
export async function startPage({ main, params }: PageContext): Promise<void> {
  const { workflows } = await gql<{ workflows: Definition[] }>(
    `{ workflows { name title version parameters startAccess } }`,
  );
  const definition = workflows.find((w) => w.name === params.name);
  if (!definition) {
    fill(
      main,
      h("h1", null, "Start a workflow"),
      h("p", { role: "alert" }, `No workflow ${params.name} you may start.`),
    );
    return;
  }
  const form = schemaForm(definition.parameters);
  const result = h("div", { "aria-live": "polite" });
  const element = h(
    "form",
    { class: "start", id: "start-form" },
    form.element,
    h("button", { type: "submit" }, "Start"),
    result,
  );
  element.addEventListener("submit", (event) => {
    event.preventDefault();
    void (async () => {
      try {
        const started = await gql<{ startWorkflow: { id: string } }>(
          `mutation($name: String!, $parameters: JSON!) { startWorkflow(name: $name, parameters: $parameters) { id } }`,
          { name: definition.name, parameters: form.value() },
        );
        navigate(`/app/instances/${started.startWorkflow.id}`);
      } catch (error) {
        fill(result, errorBox(error));
      }
    })();
  });
  fill(
    main,
    h("p", { class: "crumbs" }, link("/app/workflows", "Start a workflow")),
    h("h1", null, definition.title),
    h("p", { class: "meta" }, `${definition.name}, version ${definition.version}`),
    element,
  );
}

interface InstanceListNode {
  id: string;
  workflow: string;
  version: number;
  state: string;
  startedAt: string;
  updatedAt: string;
  startedBy: { name: string };
  error: { code: string; message: string } | null;
}

const STATES = ["RUNNING", "WAITING", "COMPLETED", "ERRORED", "CANCELLED"] as const;

/** The instances as a table; `actions` adds the operators' buttons to each row. */
export function instanceTable(
  nodes: InstanceListNode[],
  actions?: (node: InstanceListNode) => HTMLElement,
): HTMLElement {
  return h(
    "table",
    { class: "results instances" },
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        ...[
          "Instance",
          "Workflow",
          "State",
          "Started by",
          "Started",
          "Updated",
          ...(actions ? ["Error", "Actions"] : []),
        ].map((c) => h("th", { scope: "col" }, c)),
      ),
    ),
    h(
      "tbody",
      null,
      ...nodes.map((node) =>
        h(
          "tr",
          { "data-instance": node.id },
          h("td", null, link(`/app/instances/${node.id}`, node.id.slice(0, 8))),
          h("td", null, `${node.workflow} v${node.version}`),
          h("td", null, h("span", { class: `state ${node.state.toLowerCase()}` }, node.state)),
          h("td", null, node.startedBy.name),
          h("td", null, time(node.startedAt)),
          h("td", null, time(node.updatedAt)),
          actions
            ? h("td", null, node.error ? `${node.error.code}: ${node.error.message}` : "")
            : null,
          actions ? h("td", null, actions(node)) : null,
        ),
      ),
    ),
  );
}

export const INSTANCE_LIST_FIELDS = `id workflow version state startedAt updatedAt startedBy { name } error { code message }`;

/** `/app/instances`: the instances the viewer may see, by state and workflow. */
export async function instancesPage({ main, query: q }: PageContext): Promise<void> {
  const state = q.get("state") ?? "";
  const definition = q.get("workflow") ?? "";
  const stateSelect = h(
    "select",
    { id: "i-state" },
    h("option", { value: "" }, "any"),
    ...STATES.map((s) => h("option", { value: s, selected: s === state }, s.toLowerCase())),
  );
  const workflowInput = h("input", { id: "i-workflow", value: definition });
  const form = h(
    "form",
    { class: "filters" },
    h("div", { class: "field" }, h("label", { for: "i-state" }, "State"), stateSelect),
    h("div", { class: "field" }, h("label", { for: "i-workflow" }, "Workflow"), workflowInput),
    h("button", { type: "submit" }, "Filter"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    navigate(
      `/app/instances${query({ state: stateSelect.value, workflow: workflowInput.value.trim() })}`,
    );
  });
  const holder = h("div");
  fill(main, h("h1", null, "Instances"), form, holder);
  try {
    const { instances } = await gql<{ instances: { nodes: InstanceListNode[] } }>(
      `query($state: WorkflowState, $definition: String) { instances(state: $state, definition: $definition, first: 100) { nodes { ${INSTANCE_LIST_FIELDS} } } }`,
      { state: state || null, definition: definition || null },
    );
    fill(
      holder,
      instances.nodes.length === 0 ? h("p", null, "No instance.") : instanceTable(instances.nodes),
    );
  } catch (error) {
    fill(holder, errorBox(error));
  }
}

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
    actingFor: { name: string } | null;
  }[];
  dialogs: {
    id: string;
    name: string;
    state: string;
    until: string | null;
    answer: unknown;
    answeredBy: { name: string } | null;
  }[];
  children: { id: string; workflow: string; state: string }[];
  deadlines: { kind: string; name: string | null; dueAt: string; passed: boolean }[];
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

/** A cause as GraphQL gives it: one of the union's members, by `__typename`. */
interface GraphqlCause {
  readonly __typename: string;
  readonly id: string;
  readonly instanceId?: string;
  readonly workflow?: string;
  readonly step?: string;
  readonly attempt?: number;
  readonly approvedBy?: { readonly name: string } | null;
  readonly webhook?: string;
  readonly source?: string;
  readonly eventId?: string;
  readonly subject?: string;
  readonly requestId?: string;
  readonly account?: string;
  readonly type?: string;
}

/** GraphQL's typed cause as the REST channel's `cause`, to show both the same way. */
function causeFromGraphql(c: GraphqlCause | null): Cause | null {
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
        approvedBy: c.approvedBy ? { accountId: "", name: c.approvedBy.name } : null,
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

const CAUSE_FIELDS = `cause { __typename
  ... on WorkflowCause { id instanceId workflow step attempt approvedBy { name } }
  ... on ChangeEventCause { id webhook source eventId subject }
  ... on MutationCause { id requestId account }
  ... on EventCause { id type } }`;

/** Cancel and retry, as the instance's state allows; `done` redraws. */
export function instanceActions(
  node: { id: string; state: string },
  done: () => void,
  isOperator: boolean,
): HTMLElement {
  const result = h("span", { "aria-live": "polite" });
  const run = (mutation: string, label: string) => async () => {
    try {
      await gql(mutation, { id: node.id });
      announce(`${label}: done`);
      done();
    } catch (error) {
      fill(result, errorBox(error));
    }
  };
  const live = ["RUNNING", "WAITING", "ERRORED"].includes(node.state);
  return h(
    "span",
    { class: "actions" },
    node.state === "ERRORED" && isOperator
      ? h(
          "button",
          {
            type: "button",
            class: "retry",
            onclick: run(`mutation($id: ID!) { retryInstance(id: $id) { id state } }`, "Retry"),
          },
          "Retry",
        )
      : null,
    live
      ? h(
          "button",
          {
            type: "button",
            class: "cancel danger",
            onclick: run(
              `mutation($id: ID!) { cancelInstance(id: $id, reason: "cancelled in the web application") { id state } }`,
              "Cancel",
            ),
          },
          "Cancel",
        )
      : null,
    result,
  );
}

/** `/app/instances/:id`: state, steps, dialogs, deadlines, children, events and the directory changes it made. */
export async function instancePage(context: PageContext): Promise<void> {
  const { main, params, viewer } = context;
  let instance: InstanceDetail | null;
  try {
    instance = (
      await gql<{ instance: InstanceDetail | null }>(
        `query($id: ID!) { instance(id: $id) { ${INSTANCE_LIST_FIELDS} parameters result until parent { id workflow }
          steps { seq kind name state attempts startedAt endedAt error { code message } actingFor { name } }
          dialogs { id name state until answer answeredBy { name } }
          children { id workflow state }
          deadlines { kind name dueAt passed }
          events { id type version occurredAt }
          directoryChanges(first: 100) { nodes { id dn changeType occurredAt actor attributes ${CAUSE_FIELDS} } } } }`,
        { id: params.id },
      )
    ).instance;
  } catch (error) {
    fill(main, h("h1", null, "Instance"), errorBox(error));
    return;
  }
  if (!instance) {
    fill(main, h("h1", null, "Instance"), h("p", { role: "alert" }, "No such instance."));
    return;
  }
  const i = instance;
  const json = (value: unknown) => h("pre", { class: "code" }, JSON.stringify(value, null, 2));
  fill(
    main,
    h("p", { class: "crumbs" }, link("/app/instances", "Instances")),
    h(
      "h1",
      null,
      `${i.workflow} `,
      h("span", { class: `state ${i.state.toLowerCase()}`, id: "instance-state" }, i.state),
    ),
    h(
      "dl",
      { class: "data" },
      h("dt", null, "Instance"),
      h("dd", null, i.id),
      h("dt", null, "Started"),
      h("dd", null, time(i.startedAt), " by ", i.startedBy.name),
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
    instanceActions(i, () => void instancePage(context), viewer.access.has("operator")),
    h("h2", null, "Parameters"),
    json(i.parameters),
    i.result !== null ? [h("h2", null, "Result"), json(i.result)] : null,
    h("h2", null, "Steps"),
    h(
      "table",
      { class: "results" },
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
            h("td", null, s.actingFor?.name ?? ""),
            h("td", null, s.error ? `${s.error.code}: ${s.error.message}` : ""),
          ),
        ),
      ),
    ),
    i.dialogs.length
      ? [
          h("h2", null, "Dialogs"),
          h(
            "ul",
            null,
            ...i.dialogs.map((d) =>
              h(
                "li",
                null,
                `${d.name}: ${d.state}`,
                d.answeredBy ? ` by ${d.answeredBy.name}` : "",
                d.answer !== null ? ` — ${JSON.stringify(d.answer)}` : "",
                " · ",
                deadline(d.until),
              ),
            ),
          ),
        ]
      : null,
    i.deadlines.length
      ? [
          h("h2", null, "Deadlines"),
          h(
            "ul",
            null,
            ...i.deadlines.map((d) =>
              h(
                "li",
                { class: d.passed ? "passed" : "" },
                `${d.kind}${d.name ? ` ${d.name}` : ""}: `,
                time(d.dueAt),
                d.passed ? " (passed)" : "",
              ),
            ),
          ),
        ]
      : null,
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
                c.dn,
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
  );
}
