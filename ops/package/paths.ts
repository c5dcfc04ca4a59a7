import path from "node:path";

/** The repository's root, where package.json is. */
export const ROOT = path.resolve(import.meta.dirname, "../..");

/** The repository's own package.json while a pack runs (its `exports` name the sources). */
export const REPOSITORY_MANIFEST = path.join(ROOT, "package.repository.json");

/** The packed package's `exports`: the JavaScript and declarations prepack builds. */
export const PACKED_EXPORTS = {
  ".": { types: "./dist/src/index.d.ts", default: "./dist/src/index.js" },
  "./testing": { types: "./dist/src/testing/index.d.ts", default: "./dist/src/testing/index.js" },
  "./package.json": "./package.json",
};
