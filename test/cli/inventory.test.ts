import path from "node:path";
import t from "tap";
import { inventory } from "../../src/cli/commands/inventory.ts";
import { workflowsProjection } from "../../projections/index.ts";
import type { AnnalError } from "../../src/errors/index.ts";
import { definitionStream } from "../../src/events/index.ts";
import { replayProjection } from "../../src/projector/index.ts";
import { cancelInstance, startWorkflow } from "../../src/workflow/index.ts";
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

async function run(options: { name?: string; json?: boolean; config: string }) {
  const captured = capturedOutput();
  try {
    const code = await inventory(options, captured.output);
    return { code, error: undefined, out: captured.out };
  } catch (error) {
    return { code: 1, error: error as AnnalError, out: captured.out };
  }
}

t.test(
  "inventory gives each workflow's bundle hash; a name that runs in two versions is ambiguous",
  async (t) => {
    const dir = definitionsDir(t, { defs: { "hold.ts": HOLD(1) } });
    const f = await workflowFixture(t, { dir: path.join(dir, "defs") });
    const one = await startWorkflow(f, { name: "hold", parameters: {}, as: actor("a") });
    await f.settled(one.instanceId, "WAITING");
    await f.redeploy(definitionsDir(t, { defs: { "hold.ts": HOLD(2) } }) + "/defs");
    await replayProjection({ pool: f.pool, projection: workflowsProjection });
    const config = path.join(
      definitionsDir(t, {
        "annal.toml": `[database]\nurl = ${JSON.stringify(f.db.url)}\n[log]\nlevel = "silent"\n`,
      }),
      "annal.toml",
    );

    const all = await run({ config });
    t.equal(all.code, 0);
    t.match(all.out[0], /^name\s+version\s+hash\s+state\s+live\s+file$/);
    t.match(all.out[1], /^hold\s+1\s+[0-9a-f]{64}\s+running\s+1\s+hold\.ts$/, "v1 still runs");
    t.match(all.out[2], /^hold\s+2\s+[0-9a-f]{64}\s+current\s+0\s+hold\.ts$/);

    const ambiguous = await run({ config, name: "hold" });
    t.equal(ambiguous.error?.code, "ANNAL_INVENTORY_AMBIGUOUS");
    t.match(
      ambiguous.error?.message,
      /^hold runs in 2 versions: hold@1 \(running, [0-9a-f]{64}\), hold@2 \(current, /,
    );
    t.match(ambiguous.error?.hint, /annal inventory hold@1/);

    const two = await run({ config, name: "hold@2", json: true });
    t.equal(two.code, 0);
    t.match(
      two.out.map((line) => JSON.parse(line)),
      [{ name: "hold", version: 2, hash: /^[0-9a-f]{64}$/, state: "current" }],
    );

    const none = await run({ config, name: "nope" });
    t.equal(none.error?.code, "ANNAL_WORKFLOW_NOT_DEPLOYED");

    // Once v1's instance is over, the name runs one bundle again.
    await cancelInstance(f, { instanceId: one.instanceId, as: actor("a") });
    await replayProjection({ pool: f.pool, projection: workflowsProjection });
    const settled = await run({ config, name: "hold" });
    t.equal(settled.code, 0, String(settled.error?.message));
    t.match(settled.out[1], /^hold\s+2\s+[0-9a-f]{64}\s+current\s+/);

    // A definition stored without a bundle hash (a log written before hashes were recorded).
    await f.store.appendToStream(definitionStream("legacy", 1), [
      {
        type: "WorkflowDefinitionDeployed",
        data: { name: "legacy", version: 1, file: "legacy.ts" },
      },
    ]);
    const missing = await run({ config });
    t.equal(missing.error?.code, "ANNAL_BUNDLE_HASH_MISSING");
    t.equal(missing.error?.message, "stored without a bundle hash: legacy@1");
    t.ok(
      missing.out.some((line) => /^hold\s+2\s+/.test(line)),
      "the others are listed first",
    );
  },
);
