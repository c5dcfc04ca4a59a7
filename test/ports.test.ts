import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import t from "tap";
import { freePort } from "../src/ports.ts";

const ephemeralStart = Number(
  readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").split(/\s+/)[0],
);

t.test(
  "a free port is picked below the ephemeral range, where outgoing connections cannot take it",
  async (t) => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      t.ok(port >= 20_000 && port < ephemeralStart, `${port} lies in [20000, ${ephemeralStart})`);
    }
    t.ok(new Set(ports).size > 1, "picked at random, not always the same");
  },
);

t.test("the port picked can be listened on", async (t) => {
  const port = await freePort();
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  t.equal((server.address() as { port: number }).port, port);
});
