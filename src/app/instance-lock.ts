import { mkdir, open, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { AnnalError } from "../errors/index.ts";
import { isRunningNode } from "../operations/index.ts";

/** An `annal start` already runs on this data directory. */
export class AlreadyRunningError extends AnnalError {
  readonly pid: number;
  readonly url: string | undefined;

  constructor(dataDir: string, pid: number, url: string | undefined) {
    super(
      "ANNAL_ALREADY_RUNNING",
      `annal already runs on ${dataDir} (pid ${pid}${url ? `, ${url}` : ", still starting"})`,
      {
        status: 409,
        hint: `use it${url ? ` at ${url}` : ""}, or stop it first (Ctrl-C in its terminal, or kill ${pid}); to run another beside it, give it a [database] dataDir of its own`,
      },
    );
    this.pid = pid;
    this.url = url;
  }
}

/**
 * Claims `<dataDir>/annal.instance` for this `annal start`, before anything in the data
 * directory is touched (the embedded PostgreSQL, the demo slapd's configuration): a second
 * `npm start` beside a running one stops with `ANNAL_ALREADY_RUNNING`, naming the running
 * one's pid and URL, and changes none of its files. A claim whose process is gone (killed)
 * is stale and taken over. `annal token`, `annal replay` and the like do not claim it: they
 * work beside a running annal, on its database.
 */
export async function claimInstance(
  dataDir: string,
): Promise<{ publish(url: string): Promise<void>; release(): Promise<void> }> {
  await mkdir(dataDir, { recursive: true });
  const file = path.join(dataDir, "annal.instance");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, "wx");
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return {
        publish: (url) => writeFile(file, `${process.pid}\n${url}\n`),
        release: () => rm(file, { force: true }),
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const [pidText, url] = (await readFile(file, "utf8").catch(() => "")).split("\n");
    const pid = Number.parseInt(pidText ?? "", 10);
    if (Number.isInteger(pid) && pid > 0 && isRunningNode(pid)) {
      throw new AlreadyRunningError(dataDir, pid, url || undefined);
    }
    await rm(file, { force: true });
  }
  throw new AlreadyRunningError(dataDir, 0, undefined);
}
