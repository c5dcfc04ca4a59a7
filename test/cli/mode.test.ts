import { execFile } from "node:child_process";
import { promisify } from "node:util";
import t from "tap";

const run = promisify(execFile);
const MODE_MODULE = new URL("../../src/cli/mode.ts", import.meta.url).href;

/**
 * A fresh Node.js process, with `env`, that calls `setNodeEnvFor(args)` and then loads
 * graphql-js, and says which mode graphql-js took: outside production its `instanceOf` throws
 * for an object that names a graphql-js class without being one (its check for a second copy
 * of the library); in production it answers false.
 */
async function graphqlMode(args: string[], env: Record<string, string> = {}) {
  const script = `
    import { setNodeEnvFor } from ${JSON.stringify(MODE_MODULE)};
    setNodeEnvFor(${JSON.stringify(args)});
    const { isObjectType } = await import("graphql");
    let mode;
    try {
      isObjectType({ [Symbol.toStringTag]: "GraphQLObjectType" });
      mode = "production";
    } catch {
      mode = "development";
    }
    process.stdout.write(JSON.stringify({ mode, nodeEnv: process.env.NODE_ENV ?? null }));
  `;
  const { NODE_ENV: _, ...inherited } = process.env;
  const { stdout } = await run(process.execPath, ["--input-type=module", "--eval", script], {
    env: { ...inherited, ...env },
  });
  return JSON.parse(stdout) as { mode: string; nodeEnv: string | null };
}

t.test("annal runs its libraries in production mode when NODE_ENV is not set", async (t) => {
  t.same(await graphqlMode(["start", "--config", "annal.toml"]), {
    mode: "production",
    nodeEnv: "production",
  });
  t.same(await graphqlMode(["replay", "changes"]), { mode: "production", nodeEnv: "production" });
});

t.test("a NODE_ENV already set is kept", async (t) => {
  t.same(await graphqlMode(["start"], { NODE_ENV: "development" }), {
    mode: "development",
    nodeEnv: "development",
  });
  t.same(await graphqlMode(["start"], { NODE_ENV: "test" }), {
    mode: "development",
    nodeEnv: "test",
  });
});

t.test("annal start --dev leaves NODE_ENV unset", async (t) => {
  t.same(await graphqlMode(["start", "--dev"]), { mode: "development", nodeEnv: null });
});
