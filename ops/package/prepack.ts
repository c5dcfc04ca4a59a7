/**
 * `npm pack`'s prepack script: makes the package an installed project can run. Node.js strips
 * no types under node_modules, so the package ships JavaScript and declarations built here
 * (`dist/`, from `tsconfig.build.json`), while the repository goes on running its sources:
 * - builds dist/ with tsc (`.ts` imports rewritten to `.js`);
 * - writes COMMIT (`git rev-parse HEAD`, or ANNAL_COMMIT), so that `annal --version --json`
 *   names the commit without a `.git`;
 * - points package.json's `exports` at the built files, keeping the repository's own in
 *   `package.repository.json` for postpack.ts to put back.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { PACKED_EXPORTS, REPOSITORY_MANIFEST, ROOT } from "./paths.ts";

rmSync(path.join(ROOT, "dist"), { recursive: true, force: true });
const tsc = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");
execFileSync(process.execPath, [tsc, "-p", path.join(ROOT, "tsconfig.build.json")], {
  cwd: ROOT,
  stdio: "inherit",
});

// ANNAL_COMMIT names it for a copy of the tree that is not a git checkout.
const commit =
  process.env.ANNAL_COMMIT ??
  execFileSync("git", ["rev-parse", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
writeFileSync(path.join(ROOT, "COMMIT"), `${commit}\n`);

const manifestPath = path.join(ROOT, "package.json");
const text = readFileSync(manifestPath, "utf8");
writeFileSync(REPOSITORY_MANIFEST, text);
const manifest = JSON.parse(text) as Record<string, unknown>;
writeFileSync(
  manifestPath,
  `${JSON.stringify({ ...manifest, exports: PACKED_EXPORTS }, null, 2)}\n`,
);
