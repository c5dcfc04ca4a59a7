import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse } from "smol-toml";
import t from "tap";
import { findSecretLiterals } from "../../src/config/secrets.ts";
import { FROM_DEMO, initProject, STARTER_FILES } from "../../src/starter/index.ts";
import { runAnnal } from "../cli/support.ts";

async function scratch(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "annal-init-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

t.test("annal init writes a project with annal as its dependency", async (t) => {
  const dir = path.join(await scratch(t), "hr-flows");
  // --annal as from an installed annal; from a checkout it packs (init-offline.test.ts).
  const run = await runAnnal(["init", dir, "--annal", "^0.1.0"]);
  t.equal(run.code, 0, run.stderr);
  for (const file of [
    "package.json",
    "annal.toml",
    ".env.example",
    ".gitignore",
    "README.md",
    "workflows/welcome.ts",
    "tests/welcome.test.ts",
    "hooks/README.md",
    "exercises/README.md",
    // The demo's hooks and the workflows they start, so that `annal refresh` drives them here.
    "hooks/hr.ts",
    "hooks/tickets.ts",
    "hooks/_employees.ts",
    "workflows/joiner.ts",
    "workflows/leaver.ts",
    "workflows/default-groups.ts",
    "workflows/access-request.ts",
    "workflows/shared/directory.ts",
    "workflows/shared/outbox.ts",
  ]) {
    t.match(run.stdout, `wrote ${file}\n`, file);
  }
  const manifest = JSON.parse(await readFile(path.join(dir, "package.json"), "utf8")) as {
    name: string;
    scripts: Record<string, string>;
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  t.equal(manifest.name, "hr-flows");
  t.equal(manifest.dependencies.annal, "^0.1.0");
  t.equal(manifest.scripts.start, "annal start");
  t.equal(manifest.scripts.test, "annal test");
  t.ok(manifest.devDependencies.node, "npm scripts run on the pinned Node.js");

  // Every secret is a ${VARIABLE} reference, and .env.example names each variable used.
  const toml = await readFile(path.join(dir, "annal.toml"), "utf8");
  t.same(findSecretLiterals(parse(toml)), []);
  t.match(toml, /password = "\$\{LDAP_PASSWORD/);
  const example = await readFile(path.join(dir, ".env.example"), "utf8");
  for (const [, name] of toml.matchAll(/= "\$\{([A-Z_]+)/g)) t.match(example, `${name}=`);
  // The hooks' secrets too, and the demo OpenID provider `--as` signs in through.
  for (const name of ["HR_WEBHOOK_SECRET", "TICKETS_WEBHOOK_SECRET"]) t.match(example, `${name}=`);
  const config = parse(toml) as { auth?: { oidc?: { demo?: unknown } }; calendars?: unknown[] };
  t.ok(config.auth?.oidc?.demo, "[auth.oidc.demo]");
  t.ok(config.calendars?.length, "the access request's office calendar");
  t.match(await readFile(path.join(dir, ".gitignore"), "utf8"), /^\.annal\/$/m);
});

t.test("annal init refuses a directory that is not empty", async (t) => {
  const dir = await scratch(t);
  await writeFile(path.join(dir, "notes.txt"), "mine\n");
  const run = await runAnnal(["init", dir]);
  t.equal(run.code, 1);
  t.match(run.stderr, /^annal: ANNAL_INIT_DIRECTORY_NOT_EMPTY: .* is not empty \(notes\.txt\)/m);
  t.equal(await readFile(path.join(dir, "notes.txt"), "utf8"), "mine\n", "nothing is touched");
  const empty = path.join(dir, "empty");
  await mkdir(empty);
  t.ok((await initProject({ dir: empty, annal: "file:../annal.tgz" })).includes("package.json"));
  t.match(
    await readFile(path.join(empty, "package.json"), "utf8"),
    /"annal": "file:\.\.\/annal\.tgz"/,
  );
});

t.test("annal init copies the files git keeps in starter/ and the demo's, by name", async (t) => {
  const root = path.resolve(import.meta.dirname, "../..");
  const tracked = (dir: string) =>
    execFileSync("git", ["ls-files", dir], { cwd: root, encoding: "utf8" })
      .split("\n")
      .filter((file) => file !== "")
      .sort();
  t.same(
    [...STARTER_FILES].map((file) => `starter/${file}`).sort(),
    tracked("starter"),
    "STARTER_FILES is what git keeps in starter/",
  );
  t.same(
    FROM_DEMO.map(([from]) => from).sort(),
    [...tracked("ops/demo/hooks"), ...tracked("ops/demo/workflows")].sort(),
    "FROM_DEMO is what git keeps in ops/demo/hooks and ops/demo/workflows",
  );
});
