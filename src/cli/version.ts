import { execFile } from "node:child_process";
import { readFile, realpath } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { AnnalError } from "../errors/index.ts";
import { PACKAGE_ROOT } from "../package-root.ts";

/** The directory holding annal's `package.json`, `src/` and (in a checkout) `.git`. */
export const SOURCE_ROOT = PACKAGE_ROOT;

const COMMIT = /^[0-9a-f]{40}$/;

export async function packageVersion(root = SOURCE_ROOT): Promise<string> {
  const manifest = JSON.parse(await readFile(path.join(root, "package.json"), "utf8")) as {
    version: string;
  };
  return manifest.version;
}

/**
 * The source commit annal runs from, first found of:
 * 1. `git rev-parse HEAD` when `root` is the top of a git work tree (a checkout; when annal
 *    is installed inside some other repository, that repository's commit is not ours);
 * 2. a `COMMIT` file in `root` holding the 40-hex id (written by whatever packaged a tree
 *    without `.git`, e.g. `git rev-parse HEAD > COMMIT` in an image build);
 * 3. the environment variable `ANNAL_COMMIT`.
 * Undefined when none gives one.
 *
 * @throws AnnalError `ANNAL_COMMIT_INVALID` when a `COMMIT` file or `ANNAL_COMMIT` holds
 *   something other than a 40-hex commit id.
 */
export async function sourceCommit(
  options: { root?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<string | undefined> {
  const root = options.root ?? SOURCE_ROOT;
  const env = options.env ?? process.env;
  const fromGit = await gitHead(root);
  if (fromGit) return fromGit;
  const file = await readFile(path.join(root, "COMMIT"), "utf8").catch(() => undefined);
  if (file !== undefined) return validCommit(file.trim(), `${path.join(root, "COMMIT")}`);
  const variable = env.ANNAL_COMMIT;
  if (variable) return validCommit(variable.trim(), "ANNAL_COMMIT");
  return undefined;
}

async function gitHead(root: string): Promise<string | undefined> {
  try {
    const { stdout } = await promisify(execFile)("git", ["rev-parse", "--show-toplevel", "HEAD"], {
      cwd: root,
    });
    const [topLevel, head] = stdout.trim().split("\n");
    if (!topLevel || !head || !COMMIT.test(head)) return undefined;
    return (await realpath(topLevel)) === (await realpath(root)) ? head : undefined;
  } catch {
    return undefined; // no git, or not a work tree
  }
}

function validCommit(value: string, where: string): string {
  if (COMMIT.test(value.toLowerCase())) return value.toLowerCase();
  throw new AnnalError("ANNAL_COMMIT_INVALID", `${where} does not hold a 40-character commit id`, {
    hint: "write the output of git rev-parse HEAD there",
  });
}

/** `annal --version [--json]`. */
export async function versionLines(json: boolean): Promise<string[]> {
  const [version, commit] = await Promise.all([packageVersion(), sourceCommit()]);
  if (!json) return [`annal ${version} (${commit ?? "commit unknown"})`];
  if (commit === undefined) {
    throw new AnnalError(
      "ANNAL_COMMIT_UNKNOWN",
      "the source commit is unknown: this tree is not a git checkout and has no COMMIT file",
      { hint: "write the commit id to a COMMIT file beside package.json, or set ANNAL_COMMIT" },
    );
  }
  return [JSON.stringify({ version, commit })];
}
