import { createServer } from "node:net";
import t from "tap";
import { freePort } from "../../src/ports.ts";
import { configDir, runAnnal } from "./support.ts";

t.test(
  "annal start on a port in use stops before anything starts with ANNAL_PORT_IN_USE, naming the process that holds it",
  async (t) => {
    const port = await freePort();
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(port, "127.0.0.1", resolve));
    t.teardown(() => holder.close());
    const { dir } = await configDir(t, "");
    // A database nobody answers at: had start reached it, the failure would be another.
    const run = await runAnnal(["start"], {
      cwd: dir,
      env: {
        PORT: String(port),
        DATABASE_URL: `postgres://annal@127.0.0.1:${await freePort()}/none`,
      },
    });
    t.equal(run.code, 1);
    t.match(
      run.stderr,
      new RegExp(
        `annal: ANNAL_PORT_IN_USE: cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use by .*node.* \\(pid ${process.pid}\\)`,
      ),
    );
    t.match(
      run.stderr,
      new RegExp(
        `annal: hint: choose another port with PORT or server\\.port, or stop pid ${process.pid}`,
      ),
    );
  },
);
