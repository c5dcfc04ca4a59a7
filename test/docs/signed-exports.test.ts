import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { chainBatch } from "../../src/audit/index.ts";
import { addPeople, restHarness, testConfig } from "../rest/fixtures/harness.ts";

t.setTimeout(180_000);

const ROOT = path.resolve(import.meta.dirname, "../..");
const DOC = await readFile(path.join(ROOT, "docs/signed-exports.md"), "utf8");
/** The page's shell blocks, in order, as printed. */
const BLOCKS = [...DOC.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);

/** Runs blocks of the page, in order, in one bash in `dir`: its exit code and output. */
function run(dir: string, env: Record<string, string>, blocks: readonly number[]) {
  const script = ["set -euo pipefail", ...blocks.map((index) => BLOCKS[index]!)].join("\n");
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const bash = spawn("bash", ["-c", script], { cwd: dir, env: { ...process.env, ...env } });
    let output = "";
    bash.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    bash.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    bash.on("close", (code) => resolve({ code, output }));
  });
}

t.test(
  "docs/signed-exports.md checks a signed export with curl, sha256sum, jq and openssl alone, and fails once a byte changed",
  async (t) => {
    t.equal(BLOCKS.length, 5, "setup, fetch, decode, the body's check, the signature's check");
    const dataDir = t.testdir();
    const base = testConfig();
    const h = await restHarness(t, {
      config: { ...base, database: { ...base.database, dataDir } },
    });
    await addPeople(h.history);
    await h.history.settled();
    while ((await chainBatch(h.pool, 1000)) > 0);
    const address = await h.app.listen({ host: "127.0.0.1", port: 0 });
    // The substitutions the page asks the reader for: where annal serves, a token.
    const env = { ANNAL: address, TOKEN: h.auth.authorization.replace(/^Bearer /, "") };
    const dir = await mkdtemp(path.join(tmpdir(), "annal-signed-export-"));
    t.teardown(() => rm(dir, { recursive: true, force: true }));

    const checked = await run(dir, env, [0, 1, 2, 3, 4]);
    t.equal(checked.code, 0, checked.output);
    t.match(checked.output, /people\.csv: the bytes the statement describes/);
    t.match(checked.output, /Signature Verified Successfully/);
    const statement = JSON.parse(await readFile(path.join(dir, "statement.json"), "utf8"));
    t.match(statement, {
      alg: "Ed25519",
      kid: String,
      sha256: /^[0-9a-f]{64}$/,
      bytes: Number,
      logPosition: { position: Number, transaction: String },
      chainHead: { position: Number, hash: /^[0-9a-f]{64}$/ },
      signedAt: String,
    });
    t.match(await readFile(path.join(dir, "people.csv"), "utf8"), /alice/, "the export itself");

    // A byte of the body changed: the body's check fails.
    const body = await readFile(path.join(dir, "people.csv"));
    body.writeUInt8(body.readUInt8(body.length - 2) ^ 1, body.length - 2);
    await writeFile(path.join(dir, "people.csv"), body);
    const altered = await run(dir, env, [0, 2, 3]);
    t.not(altered.code, 0, "a changed body is refused");
    t.notMatch(altered.output, /the bytes the statement describes/);

    // The statement changed (more bytes claimed): OpenSSL refuses the signature.
    const [, signature] = (await readFile(path.join(dir, "people.csv.sig"), "utf8")).split(".");
    const forged = Buffer.from(JSON.stringify({ ...statement, bytes: statement.bytes + 1 }));
    await writeFile(
      path.join(dir, "people.csv.sig"),
      `${forged.toString("base64url")}.${signature}`,
    );
    const forgedRun = await run(dir, env, [0, 2, 4]);
    t.not(forgedRun.code, 0, "a changed statement is refused");
    t.match(forgedRun.output, /Signature Verification Failure/);
  },
);
