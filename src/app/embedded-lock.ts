import { open, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { AnnalError } from "../errors/index.ts";
import { isRunningNode } from "../operations/index.ts";

/** Another annal that is still running owns the embedded PostgreSQL of this data directory. */
export class EmbeddedDatabaseInUseError extends AnnalError {
  readonly pid: number;
  readonly lockFile: string;

  constructor(lockFile: string, pid: number) {
    super(
      "ANNAL_EMBEDDED_POSTGRES_IN_USE",
      `the embedded PostgreSQL in ${path.dirname(lockFile)} belongs to a running annal (pid ${pid})`,
      {
        hint: `stop that annal first, or run both against one PostgreSQL with DATABASE_URL; if no annal runs, remove ${lockFile}`,
      },
    );
    this.pid = pid;
    this.lockFile = lockFile;
  }
}

/**
 * Claims the embedded database of `dataDir` for this process, in `<dataDir>/annal.pid`.
 *
 * Why: `startEmbeddedPostgres` recovers a stale server by shutting down any postgres that
 * holds the data directory, which is right after a crash but would pull the database from
 * under an annal that is still running (`annal replay` next to `npm start`). A lock naming a
 * process that is gone (the annal was killed) is stale and taken over.
 */
export async function claimEmbeddedDataDir(
  dataDir: string,
): Promise<{ release(): Promise<void>; publish(url: string): Promise<void> }> {
  const lockFile = path.join(dataDir, "annal.pid");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(lockFile, "wx");
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return {
        release: () => rm(lockFile, { force: true }),
        // Other annal processes (`annal token`, `annal replay` beside `npm start`) read the
        // server's URL here and connect to it instead of starting a server of their own.
        publish: (url) => writeFile(lockFile, `${process.pid}\n${url}\n`),
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const owner = Number.parseInt(await readFile(lockFile, "utf8").catch(() => ""), 10);
    if (Number.isInteger(owner) && owner > 0 && isRunningNode(owner)) {
      throw new EmbeddedDatabaseInUseError(lockFile, owner);
    }
    await rm(lockFile, { force: true });
  }
  // Two processes took over the same stale lock at once and the other one won.
  const owner = Number.parseInt(await readFile(lockFile, "utf8").catch(() => "0"), 10);
  throw new EmbeddedDatabaseInUseError(lockFile, owner);
}

/** The running annal's embedded server, when a live process holds the lock and published it. */
export async function runningEmbeddedServer(
  dataDir: string,
): Promise<{ pid: number; url: string } | undefined> {
  const text = await readFile(path.join(dataDir, "annal.pid"), "utf8").catch(() => "");
  const [pidText, url] = text.split("\n");
  const pid = Number.parseInt(pidText ?? "", 10);
  if (!url || !Number.isInteger(pid) || pid <= 0 || !isRunningNode(pid)) return undefined;
  return { pid, url };
}
