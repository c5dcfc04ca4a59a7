import t from "tap";
import { EventStore } from "../../src/store/index.ts";
import {
  completeDialog,
  deployDefinitions,
  dialogIdOf,
  startWorkflow,
} from "../../src/workflow/index.ts";
import { bundleDefinition } from "../../src/workflow/bundle.ts";
import { testDatabase } from "../support/postgres.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";

t.setTimeout(180_000);

const silent = { info() {} };

/** Version `version` of "greet": it waits for a go-ahead, then greets in its own words. */
const greet = (version: number, words: string) => `
import { defineWorkflow } from "annal";
import { z } from "zod";
import { polish } from "./lib/polish.ts";
export default defineWorkflow({
  name: "greet",
  version: ${version},
  parameters: z.object({ who: z.string() }),
  async run(flow, { who }) {
    await flow.dialog({ name: "go", assignees: ["anyone"], schema: z.object({}) });
    return await flow.step("greet", () => polish(${JSON.stringify(words)} + ", " + who));
  },
});
`;
const POLISH = `export const polish = (text: string) => text + "!";\n`;
const anyone = actor("ann", { principals: ["anyone"] });

t.test("a definition's bundle is hashed by its code, wherever the project lies", async (t) => {
  const root = definitionsDir(t, {
    one: { "greet.ts": greet(1, "Hello"), lib: { "polish.ts": POLISH } },
    two: { nested: { "greet.ts": greet(1, "Hello"), lib: { "polish.ts": POLISH } } },
  });
  const a = await bundleDefinition(`${root}/one/greet.ts`);
  const b = await bundleDefinition(`${root}/two/nested/greet.ts`);
  t.equal(a.hash, b.hash);
  t.match(a.hash, /^[0-9a-f]{64}$/);
  t.match(a.code, /Hello/, "its own imports are inside");
  t.match(a.code, /from "annal"/, "annal stays outside");
});

t.test("a deployed name and version whose code changed stops start-up", async (t) => {
  const db = await testDatabase(t);
  const store = await EventStore.open(db.pool);
  const first = definitionsDir(t, { "greet.ts": greet(1, "Hello"), lib: { "polish.ts": POLISH } });
  const deployed = await deployDefinitions({ pool: db.pool, store, dir: first, log: silent });
  const { hash } = deployed.current("greet")!;
  const again = await deployDefinitions({ pool: db.pool, store, dir: first, log: silent });
  t.equal(again.current("greet")!.hash, hash, "deploying the same code again is nothing new");
  const changed = definitionsDir(t, {
    "greet.ts": greet(1, "Howdy"),
    lib: { "polish.ts": POLISH },
  });
  const error = await deployDefinitions({ pool: db.pool, store, dir: changed, log: silent }).then(
    () => undefined,
    (e: unknown) => e as { code: string; message: string; hint: string },
  );
  t.match(error, {
    code: "WF_DEFINITION_BUNDLE_CHANGED",
    message: new RegExp(
      `greet version 1 is deployed with bundle ${hash}, and its code now bundles to [0-9a-f]{64}`,
    ),
    hint: /raise the version of greet/,
  });
  const deployments = await db.pool.query(
    "SELECT count(*)::int AS n FROM events WHERE type = 'WorkflowDefinitionDeployed'",
  );
  t.equal(deployments.rows[0].n, 1, "nothing more was stored");
});

t.test(
  "a file that exports no definition, or does not bundle, is WF_DEFINITION_INVALID",
  async (t) => {
    const db = await testDatabase(t);
    const store = await EventStore.open(db.pool);
    const notOne = definitionsDir(t, { "x.ts": "export default { name: 'x' };\n" });
    await t.rejects(deployDefinitions({ pool: db.pool, store, dir: notOne, log: silent }), {
      code: "WF_DEFINITION_INVALID",
      message: /x\.ts: its default export is not a workflow definition/,
    });
    const broken = definitionsDir(t, {
      "y.ts": "import { nope } from './missing.ts';\nexport default nope;\n",
    });
    await t.rejects(deployDefinitions({ pool: db.pool, store, dir: broken, log: silent }), {
      code: "WF_DEFINITION_INVALID",
      message: /y\.ts: it does not bundle/,
    });
  },
);

t.test(
  "a definition whose options deploy can see are of the wrong shape is refused at deploy, naming the option",
  async (t) => {
    const db = await testDatabase(t);
    const store = await EventStore.open(db.pool);
    const cases: [string, RegExp][] = [
      ['until: ["3d"]', /until must be a duration, a moment or business time .* not a list/],
      ['access: { start: "operator" }', /access\.start must be a list of access functions/],
      [
        'bindings: { directory: "ldap" }',
        /bindings\.directory must be made by bind\.directory\(\)/,
      ],
      ["title: 7", /title must be a text/],
    ];
    for (const [option, message] of cases) {
      const dir = definitionsDir(t, {
        "w.ts": `import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "w",
  version: 1,
  parameters: z.object({}),
  ${option},
  async run() {},
} as never);
`,
      });
      await t.rejects(
        deployDefinitions({ pool: db.pool, store, dir, log: silent }),
        { code: "WF_DEFINITION_INVALID", message },
        option,
      );
    }
    const deployments = await db.pool.query(
      "SELECT count(*)::int AS n FROM events WHERE type = 'WorkflowDefinitionDeployed'",
    );
    t.equal(deployments.rows[0].n, 0, "none of them was deployed");
  },
);

t.test(
  "no instance is stranded by a deploy: v1 instances finish on v1's code, new starts take v2",
  async (t) => {
    const dir = definitionsDir(t, { "greet.ts": greet(1, "Hello"), lib: { "polish.ts": POLISH } });
    const f = await workflowFixture(t, { dir });
    const old: string[] = [];
    for (const who of ["ada", "bob", "cy"]) {
      old.push(
        (await startWorkflow(f, { name: "greet", parameters: { who }, as: anyone })).instanceId,
      );
    }
    for (const id of old) await f.settled(id, "WAITING");

    // v1's file is replaced by v2 (its version raised), and annal restarts.
    const next = definitionsDir(t, {
      "greet.ts": greet(2, "Bonjour"),
      lib: { "polish.ts": POLISH },
    });
    const g = await f.redeploy(next);
    t.equal(g.definitions.current("greet")!.version, 2);
    const fresh = (
      await startWorkflow(g, { name: "greet", parameters: { who: "dee" }, as: anyone })
    ).instanceId;
    await g.settled(fresh, "WAITING");
    for (const id of [...old, fresh]) {
      await completeDialog(g, { dialogId: dialogIdOf(id, 1), answer: {}, as: anyone });
    }
    const results = await Promise.all(
      [...old, fresh].map(async (id) => (await g.settled(id, "COMPLETED")).result),
    );
    t.same(results, ["Hello, ada!", "Hello, bob!", "Hello, cy!", "Bonjour, dee!"]);
    t.same((await g.state(old[0]!)).definition.version, 1, "an old instance keeps its version");
  },
);
