import { gql } from "../api.ts";
import { errorBox, fill, h, link } from "../dom.ts";
import { navigate, type PageContext } from "../router.ts";
import { schemaForm, type JsonSchema } from "../schema-form.ts";
import { labelOf } from "../workflow-data.ts";

interface Definition {
  name: string;
  title: string;
  version: number;
  parameters: JsonSchema | null;
  startAccess: string[];
}

/**
 * What a workflow is for, from what its definition offers: its parameters' own description
 * (`z.object({...}).meta({ description })`), else what it asks for, by each parameter's title.
 */
export function descriptionOf(definition: Pick<Definition, "parameters">): string {
  const schema = definition.parameters;
  if (schema?.description) return schema.description;
  const fields = Object.entries(schema?.properties ?? {}).map(
    ([key, field]) => field.title ?? labelOf(key),
  );
  if (fields.length === 0) return "Starts with no questions asked.";
  const list =
    fields.length === 1 ? fields[0]! : `${fields.slice(0, -1).join(", ")} and ${fields.at(-1)}`;
  return `Asks for ${list.toLowerCase()}.`;
}

/** Who may start it: every signed-in account, or the holders of its access functions. */
const whoMayStart = (definition: Definition) =>
  definition.startAccess.length === 0
    ? "Anyone signed in may start it."
    : `Needs the access ${definition.startAccess.join(" or ")}.`;

/** `/app/workflows`: what the viewer may start; each opens its form. */
export async function catalogPage({ main }: PageContext): Promise<void> {
  try {
    const { workflows } = await gql<{ workflows: Definition[] }>(
      `{ workflows { name title version parameters startAccess } }`,
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
                h("p", { class: "description" }, descriptionOf(w)),
                h("p", { class: "meta" }, `${w.name}, version ${w.version}. ${whoMayStart(w)}`),
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
    definition.parameters?.description
      ? h("p", { class: "description" }, definition.parameters.description)
      : null,
    h("p", { class: "meta" }, `${definition.name}, version ${definition.version}`),
    element,
  );
}
