import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, copyFile, mkdir, mkdtemp, readdir, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { AnnalError } from "../errors/index.ts";
import { BUILT, PACKAGE_ROOT } from "../package-root.ts";

/**
 * Whether this annal runs from a checkout of its repository (its TypeScript sources), not
 * from an installed package: the only place `annal init` can pack annal from.
 */
export function runsFromCheckout(): boolean {
  return !BUILT && existsSync(path.join(PACKAGE_ROOT, "src", "cli.ts"));
}

/** What a checkout holds that is no part of a pack (state, builds, the dependencies). */
const NOT_PACKED = new Set([
  ".git",
  "node_modules",
  "dist",
  ".annal",
  ".tap",
  "coverage",
  "COMMIT",
]);

/**
 * Packs this checkout with `npm pack` into `<project>/vendor/`, for a new project to install
 * annal from with no registry: `file:./vendor/annal-<version>.tgz` in its package.json. A
 * tarball rather than a `file:` link to the checkout: it holds what a registry would serve
 * (the JavaScript built at pack time; Node.js strips no types under node_modules), it goes
 * with the project when the project is copied or committed, and the checkout may change or
 * move afterwards.
 *
 * The pack is made from a copy of the files git keeps (tracked, or new and not ignored;
 * node_modules linked), so that no state or build of the checkout is packed, and the
 * checkout's own package.json is never rewritten by `prepack` while other processes read it.
 * What goes into the tarball is then package.json's `files`, which leaves scratch out.
 *
 * @returns the dependency specifier, `file:./vendor/<tarball>`.
 * @throws AnnalError `ANNAL_INIT_PACK_FAILED` when a step fails.
 */
export async function packIntoProject(
  projectDir: string,
  say: (line: string) => void,
): Promise<string> {
  const vendor = path.join(projectDir, "vendor");
  await mkdir(vendor, { recursive: true });
  const tree = await mkdtemp(path.join(tmpdir(), "annal-init-pack-"));
  try {
    say(
      `packing annal from ${PACKAGE_ROOT} into vendor/ (npm pack builds its JavaScript: about a minute)`,
    );
    for (const file of await packedFiles()) {
      await mkdir(path.dirname(path.join(tree, file)), { recursive: true });
      await copyFile(path.join(PACKAGE_ROOT, file), path.join(tree, file));
    }
    await symlink(path.join(PACKAGE_ROOT, "node_modules"), path.join(tree, "node_modules"));
    await chmod(tree, 0o755);
    const commit = (await run("git", ["rev-parse", "HEAD"], PACKAGE_ROOT)).stdout.trim();
    const packed = await run(
      "npm",
      ["pack", "--silent", "--pack-destination", vendor],
      tree,
      commit ? { ANNAL_COMMIT: commit } : {},
    );
    if (packed.code !== 0) {
      throw new AnnalError(
        "ANNAL_INIT_PACK_FAILED",
        `npm pack of ${PACKAGE_ROOT} exited with ${packed.code}: ${packed.stderr.trim().split("\n").slice(-5).join(" ")}`,
      );
    }
    const tarball = (await readdir(vendor)).find((name) => name.endsWith(".tgz"));
    if (tarball === undefined) {
      throw new AnnalError("ANNAL_INIT_PACK_FAILED", `npm pack wrote no tarball into ${vendor}`);
    }
    return `file:./vendor/${tarball}`;
  } finally {
    await rm(tree, { recursive: true, force: true });
  }
}

/** The checkout's files git keeps (as they are now); every file but state without git. */
async function packedFiles(): Promise<string[]> {
  const listed = await run(
    "git",
    ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    PACKAGE_ROOT,
  );
  if (listed.code === 0) {
    return listed.stdout
      .split("\0")
      .filter((file) => file !== "" && existsSync(path.join(PACKAGE_ROOT, file)));
  }
  const all = await readdir(PACKAGE_ROOT, { recursive: true, withFileTypes: true });
  return all
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(PACKAGE_ROOT, path.join(entry.parentPath, entry.name)))
    .filter((file) => !NOT_PACKED.has(file.split(path.sep)[0]!) && !file.endsWith(".tgz"));
}

function run(
  command: string,
  args: readonly string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // A command of its own, not a step of the npm run this may be in: none of its npm_ settings.
    const own = Object.fromEntries(
      Object.entries(process.env).filter(
        ([name]) => !name.startsWith("npm_") && name !== "INIT_CWD",
      ),
    );
    const child = spawn(command, args, {
      cwd,
      env: { ...own, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", (error) => resolve({ code: null, stdout, stderr: String(error) }));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
