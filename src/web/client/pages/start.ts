import { gql } from "../api.ts";
import { errorBox, fill, h, link } from "../dom.ts";
import { navigate, type PageContext } from "../router.ts";
import { schemaForm, type JsonSchema } from "../schema-form.ts";

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
