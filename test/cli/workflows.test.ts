import path from "node:path";
import t from "tap";
import { workflowsList } from "../../src/cli/commands/workflows.ts";
import { workflowsProjection } from "../../projections/index.ts";
import { replayProjection } from "../../src/projector/index.ts";
import { startWorkflow } from "../../src/workflow/index.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";
import { capturedOutput } from "./support.ts";

t.setTimeout(120_000);

const HOLD = (version: number) => `
import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "hold",
  version: ${version},
  parameters: z.object({}),
  async run(flow) {
    await flow.dialog({ name: "release", assignees: ["x"], schema: z.object({}) });
    return ${version};
  },
});
`;

t.test(
  "workflows list shows every deployed version, its hash and its live instances",
  async (t) => {
    const dir = definitionsDir(t, { defs: { "hold.ts": HOLD(1) } });
    const f = await workflowFixture(t, { dir: path.join(dir, "defs") });
    const one = await startWorkflow(f, { name: "hold", parameters: {}, as: actor("a") });
    await f.settled(one.instanceId, "WAITING");
    const g = await f.redeploy(definitionsDir(t, { defs: { "hold.ts": HOLD(2) } }) + "/defs");
    const config = path.join(
      definitionsDir(t, {
        defs: { "hold.ts": HOLD(2) },
        "annal.toml": `[database]\nurl = ${JSON.stringify(f.db.url)}\n[log]\nlevel = "silent"\n`,
      }),
      "annal.toml",
    );
    t.ok(g);

    const before = capturedOutput();
    t.equal(await workflowsList({ config }, before.output), 0);
    t.match(before.out[0], /^name\s+version\s+hash\s+live\s+deployed at\s+file$/);
    t.match(
      before.out[1],
      /^hold\s+1\s+[0-9a-f]{64}\s+-\s+\S+\s+hold\.ts$/,
      "live unknown before the projection is built",
    );
    t.match(before.out[2], /^hold\s+2\s+[0-9a-f]{64}\s+-\s+/);

    await replayProjection({ pool: f.pool, projection: workflowsProjection });
    const after = capturedOutput();
    t.equal(await workflowsList({ config }, after.output), 0);
    t.match(after.out[1], /^hold\s+1\s+[0-9a-f]{64}\s+1\s+/, "the v1 instance is live");
    t.match(after.out[2], /^hold\s+2\s+[0-9a-f]{64}\s+0\s+/);

    const json = capturedOutput();
    t.equal(await workflowsList({ config, json: true }, json.output), 0);
    t.match(
      json.out.map((line) => JSON.parse(line)),
      [
        { name: "hold", version: 1, hash: /^[0-9a-f]{64}$/ },
        { name: "hold", version: 2 },
      ],
    );
  },
);
