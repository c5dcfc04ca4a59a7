import { gql, query } from "../api.ts";
import { announce, errorBox, fill, h, link, time } from "../dom.ts";
import { personView } from "../names.ts";
import { navigate, type PageContext } from "../router.ts";

export interface InstanceListNode {
  id: string;
  workflow: string;
  version: number;
  state: string;
  startedAt: string;
  updatedAt: string;
  startedBy: { name: string; dn: string | null };
  error: { code: string; message: string } | null;
}

export const INSTANCE_LIST_FIELDS = `id workflow version state startedAt updatedAt startedBy { name dn } error { code message }`;

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
          h("td", null, personView(node.startedBy.dn, node.startedBy.name)),
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
