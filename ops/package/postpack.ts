/**
 * `npm pack`'s postpack script: puts the repository's package.json back (prepack.ts pointed its
 * `exports` at the built files) and removes COMMIT. dist/ stays, ignored by git.
 */
import { existsSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { REPOSITORY_MANIFEST, ROOT } from "./paths.ts";

if (existsSync(REPOSITORY_MANIFEST)) {
  renameSync(REPOSITORY_MANIFEST, path.join(ROOT, "package.json"));
}
rmSync(path.join(ROOT, "COMMIT"), { force: true });
