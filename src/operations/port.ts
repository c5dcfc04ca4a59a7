import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { createServer } from "node:net";
import { AnnalError } from "../errors/index.ts";

/** Another process listens on the port annal is to serve on. */
export class PortInUseError extends AnnalError {
  readonly owner: PortOwner | undefined;
  constructor(host: string, port: number, owner: PortOwner | undefined) {
    const who = owner === undefined ? "" : ` by ${owner.command} (pid ${owner.pid})`;
    super("ANNAL_PORT_IN_USE", `cannot listen on ${host}:${port}: the port is in use${who}`, {
      hint: `choose another port with PORT or server.port${owner ? `, or stop pid ${owner.pid} (annal stop, if it is the annal started from here)` : ""}`,
    });
    this.owner = owner;
  }
}

/** The process that listens on a port, as /proc tells it. */
export interface PortOwner {
  readonly pid: number;
  /** Its command line, cut to 120 characters. */
  readonly command: string;
}

/**
 * Preflight: whether annal could listen on `host:port`, tried before anything starts (the
 * embedded PostgreSQL, the directory, migrations), so that a port in use stops start-up at
 * once and names the process that holds it when it can.
 *
 * @throws PortInUseError `ANNAL_PORT_IN_USE`, naming the process when /proc says.
 */
export async function checkPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const code = await new Promise<string | undefined>((resolve) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
  if (code === "EADDRINUSE") throw new PortInUseError(host, port, portOwner(port));
  // EACCES and the like: listening itself will say, with its own code.
}

/**
 * The process listening on TCP `port`, found through /proc: the listening socket's inode in
 * /proc/net/tcp(6), then the process with a descriptor on `socket:[inode]`. Undefined where
 * there is no /proc, or the socket belongs to a process this user may not look into.
 */
export function portOwner(port: number): PortOwner | undefined {
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      // st 0A: LISTEN; the local address ends with the port in hex.
      if (local === undefined || fields[3] !== "0A") continue;
      if (Number.parseInt(local.split(":")[1] ?? "", 16) === port && fields[9])
        inodes.add(fields[9]);
    }
  }
  if (inodes.size === 0) return undefined;
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode !== undefined && inodes.has(inode)) {
        return { pid: Number(pid), command: commandOf(pid) };
      }
    }
  }
  return undefined;
}

function commandOf(pid: string): string {
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, "utf8")
      .split("\0")
      .filter(Boolean)
      .join(" ");
    return command.length > 120 ? `${command.slice(0, 117)}...` : command || `pid ${pid}`;
  } catch {
    return `pid ${pid}`;
  }
}
