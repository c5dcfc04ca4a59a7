import { spawn, type ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import { eventually } from "../eventually.ts";
import { sambaPaths, setGlobalOptions } from "./provision.ts";
import { tail, type SambaPrograms } from "./tools.ts";

/**
 * The loopback addresses a test DC may listen on, one DC each. Samba's LDAP ports are fixed
 * (389, 636, 3268, 3269: smb.conf has no option for them), so two DCs on one address collide;
 * but `interfaces = 127.0.0.N/8` with `bind interfaces only` binds that address alone, and Linux
 * answers all of 127.0.0.0/8 on `lo` with nothing configured, so DCs on different addresses run
 * side by side (tried: two at once on 127.0.0.3 and 127.0.0.4). A bare `127.0.0.N` without the
 * mask is no interface to samba: it then starts, listens on nothing and keeps running.
 */
export const SAMBA_ADDRESSES: readonly string[] = [
  "127.0.0.1",
  "127.0.0.2",
  "127.0.0.3",
  "127.0.0.4",
];

/**
 * The machine-wide lock of one address: a file under /tmp (not `os.tmpdir()`, which may differ
 * between users and checkouts while the ports do not), locked with flock(2) by util-linux's
 * `flock`, which then becomes samba (`-F`: no fork), so the DC itself holds the lock as an open
 * file. The kernel drops it when that process ends, however it ends: a lock is never stale, and
 * it is held exactly as long as the DC holds the ports. `lslocks` names the holder.
 */
export function lockFileOf(address: string): string {
  return `/tmp/annal-samba-dc-${address}.lock`;
}

const LOCKED = "annal-samba-dc: locked";
const BUSY_EXIT = 75;

export interface LoopbackDC {
  readonly address: string;
  /** samba's pid, also its process group's (it leads the group the support started it in). */
  readonly pid: number;
  /** How long it waited for the address's lock, 0 when an address was free. */
  readonly lockWaitMs: number;
  stop(): Promise<void>;
}

export interface LoopbackOptions {
  readonly programs: SambaPrograms;
  readonly dir: string;
  readonly addresses: readonly string[];
  /** How long to wait for an address when every one is held by another DC. */
  readonly lockTimeoutMs: number;
  readonly startTimeoutMs: number;
  /** True once the DC on `address` answers as this one (its CA, its administrator's password). */
  readonly answers: (address: string) => Promise<boolean>;
  /** Called when every address is held and the start waits for `address`. */
  readonly onWait?: (address: string) => void;
}

/**
 * Runs `samba -i -M single` for `dir` on the first address whose lock it gets without waiting;
 * when every address is held by another DC, it waits for one (up to `lockTimeoutMs`) rather than
 * fail, so test files that each want a DC run side by side up to the number of addresses and one
 * after the other beyond. An address something else listens on (samba exits with
 * NT_STATUS_ADDRESS_ALREADY_ASSOCIATED) is passed over. Resolves once `answers` says the DC is up.
 * A DC of this very process counts as another: a process that holds every address and starts
 * one more waits until it stops one of its own.
 */
export async function startOnLoopback(options: LoopbackOptions): Promise<LoopbackDC> {
  const held: string[] = [];
  const taken: string[] = [];
  for (const address of options.addresses) {
    const attempt = await tryAddress(options, address, undefined);
    if (attempt.kind === "running") return attempt.dc;
    (attempt.kind === "busy" ? held : taken).push(address);
  }
  const address = held[0];
  if (address === undefined) {
    throw new Error(
      `no loopback address is free for a Samba DC: another server listens on the LDAP ports of ${taken.join(", ")} (\`ss -ltnp\` names it)`,
    );
  }
  options.onWait?.(address);
  const attempt = await tryAddress(options, address, options.lockTimeoutMs);
  if (attempt.kind === "running") return attempt.dc;
  throw new Error(
    attempt.kind === "busy"
      ? `waited ${options.lockTimeoutMs} ms for another test's Samba DC to free ${address} (lock ${lockFileOf(address)}; \`lslocks\` names the process holding it)`
      : `something else took ${address}'s LDAP ports while this test waited for them`,
  );
}

type Attempt = { kind: "running"; dc: LoopbackDC } | { kind: "busy" } | { kind: "taken" };

async function tryAddress(
  options: LoopbackOptions,
  address: string,
  waitMs: number | undefined,
): Promise<Attempt> {
  const { conf } = sambaPaths(options.dir);
  await setGlobalOptions(conf, { interfaces: `${address}/8`, "bind interfaces only": "yes" });
  const started = Date.now();
  const launched = launch(options.programs, conf, address, waitMs);
  const outcome = await launched.outcome;
  if (outcome === "busy") return { kind: "busy" };
  if (outcome === "exited") {
    throw new Error(
      `flock or samba exited (status ${launched.exitCode()}) before locking ${lockFileOf(address)}: ${tail(launched.output())}`,
    );
  }
  const lockWaitMs = waitMs === undefined ? 0 : Date.now() - started;
  try {
    await eventually(
      async () => {
        if (launched.exitCode() !== undefined) throw new Error("samba exited");
        return options.answers(address);
      },
      {
        timeout: options.startTimeoutMs,
        interval: 50,
        what: `samba answers LDAPS on ${address}`,
      },
    );
  } catch (error) {
    await stopLaunched(launched);
    if (launched.output().includes("NT_STATUS_ADDRESS_ALREADY_ASSOCIATED"))
      return { kind: "taken" };
    throw new Error(
      `samba did not answer LDAPS on ${address}:636 (${launched.exitCode() === undefined ? "still running" : `exited with status ${launched.exitCode()}`}): ${tail(launched.output())}`,
      { cause: error },
    );
  }
  // Up: from now on the DC must not keep the test process alive on its own (the face's exit
  // hook stops it); until now it had to, while flock waited and nothing else was pending.
  launched.child.unref();
  for (const stream of [launched.child.stdin, launched.child.stdout, launched.child.stderr]) {
    (stream as Socket | null)?.unref();
  }
  let stopping: Promise<void> | undefined;
  return {
    kind: "running",
    dc: {
      address,
      pid: launched.child.pid!,
      lockWaitMs,
      stop: () => (stopping ??= stopLaunched(launched)),
    },
  };
}

interface Launched {
  readonly child: ChildProcess;
  readonly outcome: Promise<"locked" | "busy" | "exited">;
  /** undefined while it runs; then its status (null when a signal ended it). */
  exitCode(): number | null | undefined;
  readonly exited: Promise<void>;
  output(): string;
}

/**
 * `flock -F … sh -c 'echo LOCKED; exec samba …'`: one process that takes the lock, says so and
 * becomes samba, in a process group of its own (`detached`), which samba then leads. samba reads
 * its stdin (`-i`) and exits when the pipe closes, so it also ends if this process dies without
 * stopping it; `-M single` keeps it one process (the default forks four workers a service).
 */
function launch(
  programs: SambaPrograms,
  conf: string,
  address: string,
  waitMs: number | undefined,
): Launched {
  const lockArgs =
    waitMs === undefined ? ["-n"] : ["-w", String(Math.max(1, Math.ceil(waitMs / 1000)))];
  const child = spawn(
    programs.flock,
    [
      "-F",
      ...lockArgs,
      "-E",
      String(BUSY_EXIT),
      lockFileOf(address),
      "/bin/sh",
      "-c",
      `echo "${LOCKED}"; exec "$@"`,
      "annal-samba-dc",
      programs.samba,
      "-i",
      "-M",
      "single",
      "-s",
      conf,
    ],
    { detached: true, stdio: ["pipe", "pipe", "pipe"] },
  );
  let output = "";
  let locked = false;
  let code: number | null | undefined;
  let settle: (outcome: "locked" | "busy" | "exited") => void = () => {};
  const outcome = new Promise<"locked" | "busy" | "exited">((resolve) => (settle = resolve));
  const keep = (chunk: string) => {
    output = (output + chunk).slice(-8000);
    if (!locked && output.includes(LOCKED)) {
      locked = true;
      settle("locked");
    }
  };
  child.stdout?.setEncoding("utf8").on("data", keep);
  child.stderr?.setEncoding("utf8").on("data", keep);
  child.stdin?.on("error", () => {});
  const exited = new Promise<void>((resolve) => {
    child.once("error", (error) => {
      output += `\n${error.message}`;
      code = null;
      settle("exited");
      resolve();
    });
    // "close", not "exit": by then its output is read, the line that says it locked included
    child.once("close", (status) => {
      code = status;
      child.stdin?.destroy();
      settle(status === BUSY_EXIT && !locked ? "busy" : "exited");
      resolve();
    });
  });
  return { child, outcome, exitCode: () => code, exited, output: () => output };
}

/** SIGTERM to the DC's process group, SIGKILL if it has not gone in 10 s. */
async function stopLaunched(launched: Launched): Promise<void> {
  if (launched.exitCode() !== undefined) return;
  launched.child.ref(); // keep this process up until samba is gone
  const pid = launched.child.pid!;
  signalGroup(pid, "SIGTERM");
  try {
    await eventually(() => launched.exitCode() !== undefined, {
      timeout: 10_000,
      what: "samba exits on SIGTERM",
    });
  } catch {
    signalGroup(pid, "SIGKILL");
    await launched.exited;
  }
}

export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}
