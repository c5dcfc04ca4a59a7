import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../../src/db/index.ts";
import { freePort } from "../../src/ports.ts";
import { baseEntries, launchSlapd, toLdif, type SlapdServer } from "../../src/slapd/index.ts";
import { SLAPD_BASE, SLAPD_ROOT_DN } from "../../src/slapd/index.ts";
import type { Slapd } from "./slapd.ts";

/**
 * A server of the test's own that it can stop (PostgreSQL: fast shutdown) and start again on
 * the same data directory and port, as an operator's restart does. Stopped for good, and its
 * files removed, when the test ends.
 */
export interface RestartableServer {
  /** Stops the server; what was acknowledged stays in its data directory. */
  stop(): Promise<void>;
  /** Starts it again on the same data directory and port. */
  start(): Promise<void>;
  readonly running: boolean;
}

type Teardown = { teardown(fn: () => unknown): void };

/**
 * A PostgreSQL cluster of the test's own; `url` is its admin URL (for `testDatabase`'s
 * `server`). Server `settings` (`{ wal_level: "logical" }`) hold at every start.
 */
export async function restartablePostgres(
  t: Teardown,
  options: { settings?: Readonly<Record<string, string>> } = {},
): Promise<
  RestartableServer & {
    readonly url: string;
    /**
     * Stops the server as a crash would: an immediate shutdown (SIGQUIT to the postmaster),
     * with no shutdown checkpoint, so the next start recovers from the WAL, and what is
     * written to disk only at checkpoints (a replication slot's confirmed position) is as
     * the last checkpoint left it.
     */
    crash(): Promise<void>;
  }
> {
  const dir = mkdtempSync(path.join(tmpdir(), "annal-restart-pg-"));
  const dataDir = path.join(dir, "data");
  const port = await freePort();
  const launch = () =>
    startEmbeddedPostgres({
      dataDir,
      port,
      ...(options.settings ? { settings: options.settings } : {}),
    });
  let server: EmbeddedDatabase | undefined = await launch();
  const url = server.url;
  t.teardown(async () => {
    await server?.stop();
    server = undefined;
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    url,
    get running() {
      return server !== undefined;
    },
    async stop() {
      await server?.stop();
      server = undefined;
    },
    async start() {
      server ??= await launch();
    },
    async crash() {
      if (!server) return;
      const postmaster = Number.parseInt(
        readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0] ?? "",
        10,
      );
      process.kill(postmaster, "SIGQUIT");
      await server.stop(); // resolves once the postmaster has exited
      server = undefined;
    },
  };
}

/** A slapd of the test's own (like `startSlapd`) that the test can stop and start again. */
export async function restartableSlapd(
  t: Teardown,
  options: { seedLdif?: string } = {},
): Promise<RestartableServer & Slapd> {
  const dir = mkdtempSync(path.join(tmpdir(), "annal-restart-slapd-"));
  const password = randomBytes(18).toString("base64url");
  const launch = (port?: number) =>
    launchSlapd({
      dir,
      rootPassword: password,
      ...(port === undefined ? {} : { port }),
      seedLdif: () => `${toLdif(baseEntries())}\n${options.seedLdif ?? ""}`,
    });
  let server: SlapdServer | undefined = await launch();
  const { url, port } = server;
  t.teardown(async () => {
    await server?.stop();
    server = undefined;
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    url,
    base: SLAPD_BASE,
    bindDN: SLAPD_ROOT_DN,
    password,
    dataDir: dir,
    get pid() {
      return server?.pid ?? 0;
    },
    get running() {
      return server !== undefined;
    },
    async stop() {
      await server?.stop();
      server = undefined;
    },
    async start() {
      server ??= await launch(port);
    },
  };
}
