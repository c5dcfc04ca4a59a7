import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { sourceCommit } from "../../src/cli/version.ts";
import { runAnnal } from "./support.ts";

const packageVersion = (
  JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../../package.json"), "utf8")) as {
    version: string;
  }
).version;

t.test("annal --version --json prints the version and the 40-hex source commit", async (t) => {
  const run = await runAnnal(["--version", "--json"]);
  t.equal(run.code, 0, run.stderr);
  const printed = JSON.parse(run.stdout) as { version: string; commit: string };
  t.equal(printed.version, packageVersion);
  t.match(printed.commit, /^[0-9a-f]{40}$/);
  const head = execFileSync("git", ["rev-parse", "HEAD"], { encoding: "utf8" }).trim();
  t.equal(printed.commit, head, "the checkout's HEAD");
});

t.test("without git the commit comes from a COMMIT file, else from ANNAL_COMMIT", async (t) => {
  const root = await mkdtemp(path.join(tmpdir(), "annal-commit-"));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const fromEnv = "a".repeat(40);
  t.equal(await sourceCommit({ root, env: {} }), undefined);
  t.equal(await sourceCommit({ root, env: { ANNAL_COMMIT: fromEnv } }), fromEnv);
  const fromFile = "0123456789abcdef0123456789abcdef01234567";
  await writeFile(path.join(root, "COMMIT"), `${fromFile}\n`);
  t.equal(await sourceCommit({ root, env: { ANNAL_COMMIT: fromEnv } }), fromFile);
  await writeFile(path.join(root, "COMMIT"), "main\n");
  await t.rejects(sourceCommit({ root, env: {} }), { code: "ANNAL_COMMIT_INVALID" });
});

const olderNode = ["/usr/bin/node", "/usr/local/bin/node"].find((candidate) => {
  try {
    const major = Number.parseInt(
      execFileSync(candidate, ["-p", "process.versions.node"], { encoding: "utf8" }),
      10,
    );
    return major < 26;
  } catch {
    return false;
  }
});

t.test(
  "bin/annal.js on an older Node.js runs annal on the pinned Node.js 26",
  { skip: olderNode ? false : "no Node.js older than 26 on this machine" },
  async (t) => {
    const run = await runAnnal(["--version", "--json"], { node: olderNode });
    t.equal(run.code, 0, run.stderr);
    t.match(JSON.parse(run.stdout), { version: packageVersion, commit: /^[0-9a-f]{40}$/ });
    const failing = await runAnnal(["frobnicate"], { node: olderNode });
    t.equal(failing.code, 1, "the exit status comes through");
    t.match(failing.stderr, /^annal: ANNAL_USAGE: /);
  },
);
