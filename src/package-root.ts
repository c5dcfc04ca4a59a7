import { existsSync } from "node:fs";
import path from "node:path";

/**
 * The directory holding annal's `package.json` and the files that go with the code
 * (`migrations/`, `schema/`, `ops/demo/`, `starter/`, the web client's sources). In a checkout
 * the sources run from `src/`, one level below it; in an installed package they run as the
 * JavaScript built when it was packed, from `dist/src/`, two levels below. Either way it is
 * the nearest directory above this file that has a `package.json`.
 */
export const PACKAGE_ROOT = nearestPackage(import.meta.dirname);

/**
 * The file of annal's own code named `relative` from `src/` (written with its `.ts`
 * extension): the source in a checkout, its built `.js` in an installed package.
 *
 * @example
 * codeFile("index.ts") // …/src/index.ts, or …/dist/src/index.js when installed
 */
export function codeFile(relative: string): string {
  return BUILT
    ? path.join(import.meta.dirname, relative.replace(/\.ts$/, ".js"))
    : path.join(import.meta.dirname, relative);
}

/** Whether this copy runs as the JavaScript built at pack time rather than its sources. */
export const BUILT = import.meta.filename.endsWith(".js");

function nearestPackage(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}
