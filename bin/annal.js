#!/usr/bin/env node
// The `annal` command. In a checkout annal's sources are TypeScript that Node.js runs directly
// (type stripping); an installed package runs the JavaScript built when it was packed
// (dist/src/, see ops/package/prepack.ts), since Node.js strips no types under node_modules.
// Either way it takes Node.js 26:
// - on Node.js 26 or newer, src/cli.ts is imported into this very process: no second
//   process, and signals reach annal unforwarded;
// - on an older Node.js (a `#!/usr/bin/env node` shebang finds whatever `node` is first on
//   PATH), this launcher runs again in a child on the Node.js the project pins, the `node` package's
//   binary (node_modules/node/bin/node, what node_modules/.bin/node links to), with the exit
//   status and signals passed through.
import { spawn } from "node:child_process";
import { accessSync, constants, existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REQUIRED_MAJOR = 26;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const launcher = fileURLToPath(import.meta.url);
// The sources when they are here (a checkout), else the built JavaScript (a package).
const code = existsSync(path.join(root, "src", "cli.ts")) ? "../src/" : "../dist/src/";
const extension = code === "../src/" ? ".ts" : ".js";

if (Number.parseInt(process.versions.node, 10) >= REQUIRED_MAJOR) {
  // V8's heap settings and NODE_ENV first, before annal's modules load (src/cli/heap.ts and
  // src/cli/mode.ts say why).
  const { setHeapFor } = await import(new URL(`${code}cli/heap${extension}`, import.meta.url).href);
  setHeapFor(process.argv.slice(2));
  const { setNodeEnvFor } = await import(
    new URL(`${code}cli/mode${extension}`, import.meta.url).href
  );
  setNodeEnvFor(process.argv.slice(2));
  await import(new URL(`${code}cli${extension}`, import.meta.url).href);
} else {
  const node = pinnedNode();
  if (node === undefined) {
    process.stderr.write(
      `annal: ANNAL_NODE_VERSION_MISMATCH: annal needs Node.js ${REQUIRED_MAJOR} or newer; this is ${process.version}, and the pinned Node.js is not installed\n` +
        `annal: hint: run npm install in ${root}, or run annal with Node.js ${REQUIRED_MAJOR}\n`,
    );
    process.exit(1);
  }
  const child = spawn(node, [launcher, ...process.argv.slice(2)], { stdio: "inherit" });
  // A signal sent to this process alone (kill <pid>) must reach annal; one from the terminal
  // reaches both, and annal takes a repeat within a second as the same signal.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => child.kill(signal));
  }
  child.on("exit", (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else {
      process.exit(code ?? 1);
    }
  });
}

/** The `node` package's binary: resolved as a dependency first, then in this checkout. */
function pinnedNode() {
  const candidates = [];
  try {
    const manifest = createRequire(import.meta.url).resolve("node/package.json");
    candidates.push(path.join(path.dirname(manifest), "bin", "node"));
  } catch {
    // not resolvable from here
  }
  candidates.push(path.join(root, "node_modules", "node", "bin", "node"));
  candidates.push(path.join(root, "node_modules", ".bin", "node"));
  return candidates.find((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
