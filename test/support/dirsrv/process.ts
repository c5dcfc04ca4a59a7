import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync, rmSync } from "node:fs";
import type { Socket } from "node:net";
import { delimiter, join } from "node:path";
import { Client } from "ldapts";
import { eventually } from "../eventually.ts";
import { DIRSRV_ROOT_DN, dirsrvPaths } from "./dse.ts";

export const DIRSRV_INSTALL_HINT =
  "install 389 Directory Server: `DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends 389-ds-base` (Debian/Ubuntu; .ci/run does this)";

/** ns-slapd: `$NS_SLAPD`, then `PATH`, then /usr/sbin, which PATH often lacks. */
export function findNsSlapd(): string {
  const candidates = [
    process.env.NS_SLAPD,
    ...(process.env.PATH ?? "").split(delimiter).map((dir) => dir && join(dir, "ns-slapd")),
    "/usr/sbin/ns-slapd",
  ];
  for (const candidate of candidates) {
    if (!candidate) continue;
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; try the next one
    }
  }
  throw new Error(`ns-slapd (389 Directory Server) was not found: ${DIRSRV_INSTALL_HINT}`);
}

/**
 * The same watchdog as the private slapd's (src/slapd/server.ts): a shell that reads its stdin,
 * our pipe, and sends ns-slapd SIGTERM when the pipe closes, which it does when this process
 * ends in any way, even SIGKILL.
 */
const WATCHDOG =
  'exec 3<&0; "$@" </dev/null & pid=$!; { cat <&3 >/dev/null; kill $pid 2>/dev/null; } & wait $pid';

/**
 * `-d` keeps ns-slapd in the foreground (it forks away otherwise, out of the watchdog's reach);
 * this level is the error log's default, which dscontainer passes too. With `-d 0` the server
 * logs nothing at all, not even why it exits: a port already taken ends it with status 1 in
 * silence.
 */
const LOG_LEVEL = "266354688";

export interface RunningDirsrv {
  /** ns-slapd's own pid (the watchdog's child). */
  readonly pid: number;
  stop(): Promise<void>;
}

interface Launched {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  exitCode(): number | null | undefined;
  output(): string;
}

function launch(nsSlapd: string, dir: string): Launched {
  const paths = dirsrvPaths(dir);
  const child = spawn(
    "/bin/sh",
    [
      "-c",
      WATCHDOG,
      "dirsrv-watchdog",
      nsSlapd,
      "-D",
      paths.config,
      "-i",
      paths.pidFile,
      "-d",
      LOG_LEVEL,
    ],
    { stdio: ["pipe", "ignore", "pipe"], detached: true },
  );
  let output = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    output = (output + chunk).slice(-8000);
  });
  child.stdin?.on("error", () => {});
  let code: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.once("error", () => resolve((code = null)));
    child.once("exit", (status) => {
      child.stdin?.destroy();
      resolve((code = status));
    });
  });
  // The watchdog must not keep a test alive on its own: the exit hook stops the server then.
  child.unref();
  for (const stream of [child.stdin, child.stderr]) (stream as Socket | null)?.unref();
  return { child, exited, exitCode: () => code, output: () => output };
}

async function answersBind(url: string, password: string): Promise<boolean> {
  const client = new Client({ url, connectTimeout: 1000, timeout: 2000 });
  try {
    await client.bind(DIRSRV_ROOT_DN, password);
    return true;
  } catch {
    return false;
  } finally {
    await client.unbind().catch(() => {});
  }
}

/**
 * Starts ns-slapd on the instance in `dir` (its `dse.ldif` written for `url`'s port) and
 * resolves once it has written its pid file and answers a bind as the root DN with `password`.
 * Rejects with `ExitedEarly` if it exits first; its `portTaken` says whether the port was taken.
 */
export async function runNsSlapd(options: {
  nsSlapd: string;
  dir: string;
  url: string;
  password: string;
  timeoutMs: number;
}): Promise<RunningDirsrv> {
  const paths = dirsrvPaths(options.dir);
  rmSync(paths.pidFile, { force: true }); // an attempt on a port that was taken may leave one
  const launched = launch(options.nsSlapd, options.dir);
  try {
    await eventually(
      async () => {
        if (launched.exitCode() !== undefined) throw new ExitedEarly(launched);
        return existsSync(paths.pidFile) && (await answersBind(options.url, options.password));
      },
      {
        timeout: options.timeoutMs,
        interval: 20,
        what: `ns-slapd answers a bind on ${options.url}`,
      },
    );
  } catch (error) {
    await stopLaunched(launched, undefined);
    if (error instanceof ExitedEarly) throw error;
    throw new Error(`${(error as Error).message}; its log: ${tail(launched.output())}`, {
      cause: error,
    });
  }
  const pid = Number(readFileSync(paths.pidFile, "utf8").trim());
  return { pid, stop: () => stopLaunched(launched, pid) };
}

export class ExitedEarly extends Error {
  readonly portTaken: boolean;
  constructor(launched: Launched) {
    const output = launched.output();
    super(`ns-slapd exited with status ${launched.exitCode()} before it answered: ${tail(output)}`);
    this.portTaken = /address is in use|PR_Bind\(\) .* failed/i.test(output);
  }
}

function tail(output: string): string {
  const lines = output.trim().split("\n").slice(-4);
  return lines.length > 0 && lines[0] !== "" ? lines.join(" | ") : "(nothing on stderr)";
}

/**
 * Kills ns-slapd and waits for the watchdog, which reaps it, to end. A clean shutdown (SIGTERM)
 * takes ns-slapd over 2 s, for an instance whose directory is removed next. Killing the
 * watchdog first would leave ns-slapd to whatever init the machine has, a zombie where it
 * reaps nothing.
 */
async function stopLaunched(launched: Launched, pid: number | undefined): Promise<void> {
  if (launched.exitCode() !== undefined) return;
  launched.child.ref(); // keep this process up until the server is gone
  if (pid === undefined) launched.child.stdin?.end();
  else {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
  await launched.exited;
}
