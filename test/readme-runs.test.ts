/**
 * README.md run top to bottom as a new user runs it: `npm start` in a clone (a copy of this
 * checkout's tracked files, node_modules linked), then every shell block in order in one bash
 * session (what a block sets, the next sees, as in a terminal), literally: the only changes
 * are the placeholders the README tells the reader to fill in (`<the dialog id>`), each from
 * what the block before printed, as its markers say (test/support/readme-blocks.ts).
 *
 * A block fails the test when a command in it fails, or it prints an error (`annal: <CODE>:`,
 * a problem's or GraphQL error's code) that the README does not announce in the block or the
 * prose beside it; or when it does not print what its `prints` marker says the README
 * promises. Blocks the README marks `skip` are reported with the reason.
 *
 * The demo listens where the README says (4173, slapd on 3890, the OpenID provider on 4174,
 * mail on 2525): the whole run, `npm start` and every block, is in a network namespace of its
 * own (`unshare -n`, as root), so it collides with no other test and no demo on this machine;
 * and it has no way out, so the README asks for nothing from the network either.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readlinkSync } from "node:fs";
import {
  chmod,
  copyFile,
  mkdir,
  mkdtemp,
  readFile,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { exited } from "./cli/support.ts";
import { eventually } from "./support/eventually.ts";
import { readmeBlocks, type ReadmeBlock } from "./support/readme-blocks.ts";

t.setTimeout(900_000);

const ROOT = path.resolve(import.meta.dirname, "..");
const README = await readFile(path.join(ROOT, "README.md"), "utf8");
const blocks = readmeBlocks(README);

/** The environment of a terminal: none of the outer npm's, the suite's or a test's. */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith("npm_") || name === "INIT_CWD" || name.startsWith("ANNAL_")) continue;
    if (name === "DATABASE_URL" || name === "PORT" || name.startsWith("TAP")) continue;
    if (name === "NODE_OPTIONS" || name === "NODE_ENV") continue;
    env[name] = value;
  }
  return env;
}

let clone = "";
let scratch = "";
let demoLog = "";
let shellOut = "";
let shell: ChildProcess;
let netns = "";
const inNetns = (command: string[]) => ["nsenter", `--net=${netns}`, "--", ...command];

// Set up before the first block: the clone, its namespace, npm start, the session.
t.before(async () => {
  // A clone: the files git keeps (tracked, or new and not ignored) as they are in this working tree.
  const base = await mkdtemp(path.join(tmpdir(), "annal-readme-"));
  await chmod(base, 0o755); // the embedded PostgreSQL runs as `postgres` when this runs as root
  clone = path.join(base, "annal");
  scratch = path.join(base, "blocks");
  await mkdir(scratch);
  t.teardown(() => rm(base, { recursive: true, force: true, maxRetries: 5 }));
  const tracked = execFileSync(
    "git",
    ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    { cwd: ROOT, encoding: "utf8" },
  )
    .split("\0")
    .filter((file) => file !== "" && existsSync(path.join(ROOT, file)));
  for (const file of tracked) {
    await mkdir(path.dirname(path.join(clone, file)), { recursive: true });
    await copyFile(path.join(ROOT, file), path.join(clone, file));
  }
  await symlink(path.join(ROOT, "node_modules"), path.join(clone, "node_modules"));

  // The network namespace: a process that sleeps in it, entered by each command with nsenter.
  const holder = spawn("unshare", ["--net", "sleep", "infinity"], { stdio: "ignore" });
  t.teardown(async () => {
    holder.kill();
    await exited(holder);
  });
  const ownNet = readlinkSync("/proc/self/ns/net");
  netns = `/proc/${holder.pid}/ns/net`;
  await eventually(() => holder.exitCode === null && readlinkSync(netns) !== ownNet, {
    what: "unshare's network namespace (the test needs root)",
  });
  const loUp = inNetns(["ip", "link", "set", "lo", "up"]);
  execFileSync(loUp[0]!, loUp.slice(1));

  const spawnInNetns = function spawnInNetns(
    command: string[],
    options: { detached?: boolean } = {},
  ): ChildProcess {
    const [file, ...args] = inNetns(command);
    return spawn(file!, args, {
      cwd: clone,
      env: userEnv(),
      stdio: ["pipe", "pipe", "pipe"],
      ...options,
    });
  };

  // `npm start` as the README's first block has it.
  if (!/^npm install && npm start\b/m.test(blocks[0]?.text ?? "")) {
    throw new Error("the README's first block no longer starts the demo with npm start");
  }
  const demo = spawnInNetns(["npm", "start"], { detached: true });
  demo.stdout!.on("data", (chunk: Buffer) => (demoLog += chunk.toString()));
  demo.stderr!.on("data", (chunk: Buffer) => (demoLog += chunk.toString()));
  t.teardown(async () => {
    if (demo.exitCode === null && demo.signalCode === null) {
      process.kill(-demo.pid!, "SIGTERM");
      await exited(demo);
    }
    const postmaster = path.join(clone, ".annal", "postgres", "postmaster.pid");
    await eventually(() => !existsSync(postmaster), {
      timeout: 60_000,
      what: "the demo's embedded PostgreSQL has stopped",
    });
  });
  const readyz = inNetns([
    "curl",
    "-s",
    "-o",
    "/dev/null",
    "-w",
    "%{http_code}",
    "http://127.0.0.1:4173/readyz",
  ]);
  await eventually(
    () => {
      if (demo.exitCode !== null) throw new Error(`npm start exited: ${demoLog}`);
      // Ready, and the first start's import done, as npm start's log says.
      return (
        /"msg":"import done"/.test(demoLog) &&
        spawnSync(readyz[0]!, readyz.slice(1), { encoding: "utf8" }).stdout === "200"
      );
    },
    { timeout: 180_000, interval: 500, what: "the demo's import is done and /readyz answers 200" },
  ).catch((error: Error) => {
    throw new Error(`${error.message}; npm start printed:\n${demoLog}`);
  });

  // One bash session for every block, as a terminal is.
  shell = spawnInNetns(["bash", "--noprofile", "--norc"]);
  shell.stdout!.on("data", (chunk: Buffer) => (shellOut += chunk.toString()));
  shell.stderr!.resume();
  t.teardown(async () => {
    shell.stdin!.end();
    await exited(shell);
  });
  shell.stdin!.write(
    // Every failing command says so, and the session goes on (as a terminal's does).
    `set -E -o pipefail; trap 'echo "readme-test: exit $? at line $LINENO: $BASH_COMMAND" >&2' ERR\n`,
  );
});

/** Runs `text` in the session; what it printed, standard output and error together. */
async function runInSession(index: number, text: string): Promise<string> {
  const file = path.join(scratch, `block-${index}.sh`);
  const output = path.join(scratch, `block-${index}.out`);
  await writeFile(file, text);
  const done = `readme-test: done ${index}`;
  shell.stdin!.write(`source ${file} < /dev/null > ${output} 2>&1; echo "${done}"\n`);
  await eventually(() => shellOut.includes(`${done}\n`), {
    timeout: 300_000,
    interval: 100,
    what: `the block at README.md:${blocks[index]!.line} ends`,
  });
  return readFile(output, "utf8");
}

let conditions = 0;

/** Whether `command` succeeds in the session (quietly: a reader's check, not a block). */
async function succeedsInSession(command: string): Promise<boolean> {
  const file = path.join(scratch, `when-${++conditions}.sh`);
  await writeFile(file, `${command}\n`);
  const said = `readme-test: when ${conditions} `;
  shell.stdin!.write(`source ${file} < /dev/null > /dev/null 2>&1; echo "${said}$?"\n`);
  const status = await eventually(() => new RegExp(`${said}(\\d+)\n`).exec(shellOut)?.[1], {
    timeout: 60_000,
    interval: 50,
    what: `${command} ends`,
  });
  return status === "0";
}

/** The paragraphs of prose that touch a block: where the README announces what it prints. */
function beside(block: ReadmeBlock): string {
  const before =
    block.before
      .trim()
      .split(/\n\s*\n/)
      .at(-1) ?? "";
  const after = block.after.trim().split(/\n\s*\n/)[0] ?? "";
  return `${before}\n${block.text}\n${after}`;
}

/**
 * The errors a block printed: annal's CLI lines, problem and GraphQL error codes. Lines of
 * annal's own log (`annal logs` prints them) are a record of what happened before, not answers.
 */
function errorsIn(output: string): { codes: string[]; cliErrors: string[] } {
  const answers = output
    .split("\n")
    .filter((line) => !line.startsWith('{"level":'))
    .join("\n");
  const cliErrors = [...answers.matchAll(/^annal: ([A-Z][A-Z0-9_]+): /gm)].map((m) => m[1]!);
  const codes = [
    ...cliErrors,
    ...[...answers.matchAll(/"(?:code|annalCode)"\s*:\s*"([^"]+)"/g)].map((m) => m[1]!),
  ];
  if (/"errors"\s*:\s*\[/.test(answers) && codes.length === 0) codes.push("GraphQL errors");
  return { codes, cliErrors };
}

let previousOutput = "";
for (const [index, block] of blocks.entries()) {
  const where = `README.md:${block.line}`;
  if (block.language !== "sh") continue; // toml, text, graphql shown as files: not run
  const first = block.text.trim().split("\n")[0];
  if (block.skip !== undefined) {
    t.test(`${where} ${first}`, { skip: block.skip }, () => {});
    continue;
  }
  await t.test(`${where} ${first}`, async (t) => {
    let text = block.text;
    for (const { placeholder, pattern } of block.substitutions) {
      const value = pattern.exec(previousOutput)?.[1];
      t.ok(value, `the block before printed ${placeholder} (${pattern})`, { previousOutput });
      if (value === undefined) return;
      t.ok(text.includes(placeholder), `the block has ${placeholder}`);
      text = text.replaceAll(placeholder, value);
      t.comment(`${placeholder} = ${value}`);
    }
    const left = /<(the [^>]+)>/.exec(text);
    t.notOk(left, `no placeholder left that the README does not say how to fill in: ${left?.[0]}`);
    if (block.when !== undefined) {
      const condition = block.when;
      await eventually(() => succeedsInSession(condition), {
        timeout: 60_000,
        interval: 250,
        what: `${condition} succeeds, as the README says to wait for`,
      });
    }
    const output = await runInSession(index, text);
    previousOutput = output;
    const announced = beside(block);
    const failures = [...output.matchAll(/^readme-test: exit \d+ at line \d+: .*$/gm)].map(
      (m) => m[0],
    );
    const { codes, cliErrors } = errorsIn(output);
    const unannounced = codes.filter((code) => !announced.includes(code));
    t.same(unannounced, [], "every error it prints is announced beside it", { output });
    // A command that fails with an announced error is what the README shows; any other is not.
    const expectedFailures = cliErrors.filter((code) => announced.includes(code)).length;
    t.ok(failures.length <= expectedFailures, "no command fails but those announced", {
      failures,
      output,
    });
    for (const promised of block.prints) t.match(output, promised, `prints ${promised}`);
  });
}
