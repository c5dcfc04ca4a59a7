import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** The lowest port picked; below it sit the well-known and registered services. */
const LOWEST = 20_000;
/** Linux's default start of the ephemeral range, where `/proc` does not say. */
const DEFAULT_EPHEMERAL_START = 32_768;
const ATTEMPTS = 64;

/**
 * A loopback TCP port nothing listens on now, for a server about to start on it: the embedded
 * PostgreSQL, a private slapd, a test's annal.
 *
 * The port is picked at random below the kernel's ephemeral range. A port in that range (what
 * `listen(0)` hands out) is also the local end the kernel gives outgoing connections, so any
 * connection on the machine can take it between this pick and the server's bind; below the
 * range only another pick can, and the random pick makes that rare. `listen(0)` is the fallback
 * when the range leaves no room or every attempt finds its port taken.
 */
export async function freePort(): Promise<number> {
  const below = ephemeralStart();
  for (let attempt = 0; attempt < ATTEMPTS && below > LOWEST; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (below - LOWEST));
    if ((await listenOnce(port)) !== undefined) return port;
  }
  const port = await listenOnce(0);
  if (port === undefined) throw new Error("no free loopback port: listen(0) failed");
  return port;
}

/** Where the kernel's ephemeral ports begin (Linux); the default elsewhere. */
function ephemeralStart(): number {
  try {
    const start = Number(
      readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").split(/\s+/)[0],
    );
    return Number.isInteger(start) && start > 0 ? start : DEFAULT_EPHEMERAL_START;
  } catch {
    return DEFAULT_EPHEMERAL_START;
  }
}

/** Listens on `port` of 127.0.0.1 and closes again; the port it got, or undefined if taken. */
function listenOnce(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.unref();
    probe.once("error", () => resolve(undefined));
    probe.listen(port, "127.0.0.1", () => {
      const address = probe.address();
      const bound = typeof address === "object" && address ? address.port : undefined;
      probe.close(() => resolve(bound));
    });
  });
}
