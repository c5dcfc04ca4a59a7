/**
 * `annal init` from a checkout, as the README shows it first (`npm run annal -- init
 * ../my-flows`), with annal on no registry: init packs this checkout into the project's
 * `vendor/` and points package.json at the tarball, so the project's `npm install` needs no
 * registry for annal (the registry's packages come from npm's cache where it has them); the
 * project's own `npm test` passes; and two projects' demos run at once, each on the ports its
 * environment gives (PORT, DEMO_LDAP_PORT, DEMO_OIDC_PORT), a scenario driven in one of them.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { freePort } from "../../src/ports.ts";
import { exited } from "../cli/support.ts";
import { eventually } from "../support/eventually.ts";

// A pack (tsc), two installs and two first starts.
t.setTimeout(900_000);

const ROOT = path.resolve(import.meta.dirname, "../..");
const own = JSON.parse(await readFile(path.join(ROOT, "package.json"), "utf8")) as {
  version: string;
};
const TARBALL = `annal-${own.version}.tgz`;

/** The environment of a command a user types: none of the outer npm's or the suite's. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith("npm_") || name === "INIT_CWD" || name.startsWith("ANNAL_")) continue;
    if (name === "DATABASE_URL" || name === "PORT" || name.startsWith("TAP")) continue;
    if (name.startsWith("DEMO_")) continue;
    env[name] = value;
  }
  return { ...env, ...extra };
}

async function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: userEnv(options.env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const { code } = await exited(child);
  return { code, out, err };
}

const base = await mkdtemp(path.join(tmpdir(), "annal-init-offline-"));
await chmod(base, 0o755); // the embedded PostgreSQL runs as `postgres` when this runs as root
t.teardown(() => rm(base, { recursive: true, force: true, maxRetries: 5 }));
const first = path.join(base, "my-flows");
const second = path.join(base, "more-flows");

t.test("npm run annal -- init packs this checkout into the project", async (t) => {
  const init = await run("npm", ["run", "annal", "--", "init", first], { cwd: ROOT });
  t.equal(init.code, 0, init.err);
  t.match(init.err, /^annal: packing annal from .* into vendor\//m, "says what takes a while");
  t.match(init.out, `wrote vendor/${TARBALL}\n`);
  const manifest = JSON.parse(await readFile(path.join(first, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  t.equal(manifest.dependencies.annal, `file:./vendor/${TARBALL}`);
  // The tarball holds the demo's workflows git keeps, no file left beside them.
  const listing = execFileSync("tar", ["tzf", path.join(first, "vendor", TARBALL)], {
    encoding: "utf8",
  })
    .split("\n")
    .filter((file) => file.startsWith("package/ops/demo/workflows/") && !file.endsWith("/"))
    .map((file) => file.slice("package/".length))
    .sort();
  const tracked = execFileSync("git", ["ls-files", "ops/demo/workflows"], {
    cwd: ROOT,
    encoding: "utf8",
  })
    .split("\n")
    .filter((file) => file !== "")
    .sort();
  t.same(listing, tracked);
});

t.test("the project installs annal from vendor/, and its npm test passes", async (t) => {
  const installed = await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], {
    cwd: first,
  });
  t.equal(installed.code, 0, installed.err);
  const annal = JSON.parse(
    await readFile(path.join(first, "node_modules", "annal", "package.json"), "utf8"),
  ) as { version: string };
  t.equal(annal.version, own.version);
  const tested = await run("npm", ["test"], { cwd: first });
  t.equal(tested.code, 0, tested.out + tested.err);
  t.match(tested.out, /^annal test: 2 passed, 0 failed, 1 file/m);
});

t.test("a second project, from the first one's tarball", async (t) => {
  const tarball = path.join(first, "vendor", TARBALL);
  const init = await run(
    process.execPath,
    [path.join(ROOT, "bin", "annal.js"), "init", second, "--annal", `file:${tarball}`],
    { cwd: base },
  );
  t.equal(init.code, 0, init.err);
  const installed = await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], {
    cwd: second,
  });
  t.equal(installed.code, 0, installed.err);
});

t.test("both projects' demos run at once, on the ports their environment gives", async (t) => {
  const started: { dir: string; env: Record<string, string>; log: () => string }[] = [];
  for (const dir of [first, second]) {
    const env = {
      PORT: String(await freePort()),
      DEMO_LDAP_PORT: String(await freePort()),
      DEMO_OIDC_PORT: String(await freePort()),
    };
    const child: ChildProcess = spawn("npm", ["start"], {
      cwd: dir,
      env: userEnv(env),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // its own process group: npm and annal stop together
    });
    let log = "";
    child.stdout!.on("data", (chunk: Buffer) => (log += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (log += chunk.toString()));
    t.teardown(async () => {
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(-child.pid!, "SIGTERM");
        await exited(child);
      }
      const postmaster = path.join(dir, ".annal", "postgres", "postmaster.pid");
      await eventually(() => !existsSync(postmaster), {
        timeout: 60_000,
        what: `${dir}'s embedded PostgreSQL has stopped`,
      });
    });
    started.push({ dir, env, log: () => log });
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`npm start exited: ${log}`);
        const response = await fetch(`http://127.0.0.1:${env.PORT}/readyz`).catch(() => undefined);
        return response?.ok;
      },
      { timeout: 180_000, interval: 250, what: `${dir}'s /readyz answers 200` },
    );
  }
  for (const { dir, env, log } of started) {
    t.match(log(), `demo directory (slapd) on ldap://127.0.0.1:${env.DEMO_LDAP_PORT}/`, dir);
    t.match(log(), `demo OpenID provider on http://127.0.0.1:${env.DEMO_OIDC_PORT}`, dir);
  }
  // The first still answers with the second running, and the second's CLI finds its own
  // annal and its own demo provider.
  const firstReady = await fetch(`http://127.0.0.1:${started[0]!.env.PORT}/readyz`);
  t.equal(firstReady.status, 200);
  const hire = await run("npx", ["annal", "refresh", "hire", "--as", "prossi"], {
    cwd: second,
    env: started[1]!.env,
  });
  t.equal(hire.code, 0, hire.out + hire.err);
  t.match(hire.out, /^hire alovelace: .* processed: joiner \S+ \(started\)$/m);
});
