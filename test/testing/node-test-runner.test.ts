import { spawn } from "node:child_process";
import path from "node:path";
import t from "tap";

t.setTimeout(180_000);

const EXAMPLE = path.resolve(import.meta.dirname, "../../examples/testing/greet.node-test.ts");

t.test("the driver works under node:test, on an embedded PostgreSQL of its own", async (t) => {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, ["--test", "--test-reporter=tap", EXAMPLE], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  t.equal(code, 0, output);
  t.match(output, /# pass 2\n/);
  t.match(output, /# fail 0\n/);
});
