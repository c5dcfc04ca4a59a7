import { mkdtempSync, rmSync, statSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { createToken } from "../../src/auth/index.ts";
import { loadConfig } from "../../src/config/index.ts";
import { createPool, databaseAddress, startEmbeddedPostgres } from "../../src/db/index.ts";
import type { Queryable } from "../../src/db/index.ts";
import { freePort } from "../../src/ports.ts";
import { configDir, runAnnal } from "../cli/support.ts";
import { capturedLogger } from "../http/support.ts";
import { PROSSI, startAccountsAnnal } from "../support/accounts.ts";
import { eventually } from "../support/eventually.ts";
import { privatePostgres, testDatabase } from "../support/postgres.ts";

t.setTimeout(240_000);

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/**
 * How the sessions of the current database reach its server: over a Unix socket a session has
 * no client address and its client port is -1 (pg_stat_activity), and `inet_server_addr()`
 * is NULL.
 */
async function sessions(db: Queryable) {
  const own = await db.query<{ server: string | null }>("SELECT inet_server_addr() AS server");
  const all = await db.query<{ application_name: string; by_socket: boolean }>(
    `SELECT application_name, client_addr IS NULL AND client_port = -1 AS by_socket
       FROM pg_stat_activity
      WHERE datname = current_database() AND backend_type = 'client backend'`,
  );
  return { server: own.rows[0]?.server ?? null, all: all.rows };
}

t.test(
  "annal on its embedded PostgreSQL connects through the server's Unix socket, every connection, and says so",
  async (t) => {
    const { dir, file } = await configDir(
      t,
      `[database]\ndataDir = "state"\n[log]\nlevel = "info"\n`,
    );
    const dataDir = path.join(dir, "state", "postgres");
    const { log, lines } = capturedLogger();
    const config = await loadConfig({
      configPath: file,
      cwd: dir,
      env: { PORT: String(await freePort()) },
    });
    const annal = await startAnnal({ config, log });
    t.teardown(() => annal.stop());
    const started = lines.find((line) => String(line.msg).startsWith("annal serves"));
    t.match(
      started?.database,
      new RegExp(
        `^embedded PostgreSQL in ${escaped(dataDir)}, over the Unix socket ${escaped(dataDir)}/\\.s\\.PGSQL\\.\\d+$`,
      ),
      "the status line says the socket",
    );
    t.match(String(started?.msg), /; database: embedded PostgreSQL in .*, over the Unix socket /);

    // The server's sessions of annal's database: the pool's, pg-boss's, the listeners'.
    const { server, all } = await eventually(
      async () => {
        const found = await sessions(annal.store.pool);
        return found.all.some((s) => s.application_name === "annal-jobs-listener")
          ? found
          : undefined;
      },
      { what: "the jobs' listener connected" },
    );
    t.equal(server, null, "inet_server_addr() is NULL: this session came by the socket");
    t.ok(all.length >= 3, `annal's sessions: ${all.map((s) => s.application_name).join(", ")}`);
    t.same(
      all.filter((s) => !s.by_socket),
      [],
      "no session of annal's database came over TCP",
    );

    // `annal status` beside it, on the same embedded server (the running annal's).
    const status = await runAnnal(["status", "--json"], { cwd: dir });
    t.equal(status.code, 0, status.stderr);
    t.match(JSON.parse(status.stdout), {
      database: {
        transport: "unix-socket",
        address: new RegExp(`^${escaped(dataDir)}/\\.s\\.PGSQL\\.\\d+$`),
        description:
          /^the embedded PostgreSQL of the annal running as pid \d+, over the Unix socket /,
      },
    });
    const human = await runAnnal(["status"], { cwd: dir });
    t.match(human.stdout, /^database: the embedded PostgreSQL of .*, over the Unix socket .*\n/);
    await annal.stop();
  },
);

t.test(
  "the embedded server's socket goes to a private directory when the data directory's path is too long for a socket",
  async (t) => {
    const root = mkdtempSync(path.join(tmpdir(), "annal-long-"));
    t.teardown(() => rmSync(root, { recursive: true, force: true }));
    // 107 bytes at most for `<dir>/.s.PGSQL.<port>`.
    const dataDir = path.join(root, "a-directory-whose-name-is-long".repeat(3), "postgres");
    t.ok(dataDir.length > 92, `${dataDir.length} bytes`);
    const server = await startEmbeddedPostgres({ dataDir });
    t.teardown(() => server.stop());
    const socketDir = path.dirname(server.socket);
    t.equal(path.dirname(socketDir), tmpdir(), "under the temporary directory");
    t.ok(server.socket.length <= 107, server.socket);
    const mode = statSync(socketDir).mode & 0o777;
    t.equal(mode, 0o700, "entered by the server's user alone");
    if (process.getuid?.() === 0) {
      t.equal(statSync(socketDir).uid, statSync(dataDir).uid, "owned by the server's user");
    }
    t.same(databaseAddress(server.url), { transport: "unix-socket", address: server.socket });
    const pool = createPool(server.url, 1);
    t.equal((await sessions(pool)).server, null, "connected by the socket");
    await pool.end();
    await server.stop();
    t.notOk(existsSync(socketDir), "removed when the server stops");
  },
);

t.test(
  "a DATABASE_URL naming a socket serves a start, a write and its capture; TCP still works",
  async (t) => {
    // A server of the test's own, so that its socket is known whatever the suite runs on.
    const admin = new URL(await privatePostgres());
    const socketDir = decodeURIComponent(admin.hostname);
    t.ok(socketDir.startsWith("/"), `the embedded server's URL names its socket: ${admin.host}`);
    const base = await testDatabase(t, { server: admin.toString() });
    // libpq's spelling: no host in the authority, the socket's directory as `host`.
    const url =
      `postgresql:///${base.name}?host=${encodeURIComponent(socketDir)}&port=${admin.port}` +
      `&user=${admin.username}&password=${admin.password}`;
    t.same(databaseAddress(url), {
      transport: "unix-socket",
      address: `${socketDir}/.s.PGSQL.${admin.port}`,
    });

    const app = await startAccountsAnnal(t, {
      db: { ...base, url },
      captureInterval: "1s",
    });
    t.equal((await sessions(app.store.pool)).server, null, "annal's pool came by the socket");
    const { token } = await createToken(app.db.pool, app.store, {
      name: "editor",
      access: ["read", "write"],
    });
    await eventually(
      async () =>
        (await app.db.pool.query("SELECT 1 FROM capture_checkpoints WHERE source = 'accesslog'"))
          .rowCount,
      { what: "the first start's import" },
    );
    const written = await fetch(`${app.url}/graphql`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        origin: app.url,
      },
      body: JSON.stringify({
        query: `mutation { updatePerson(dn: "${PROSSI}", input: [{ operation: replace, changes: { title: "By socket" } }]) { title } }`,
      }),
    });
    t.same(await written.json(), { data: { updatePerson: { title: "By socket" } } });
    // Captured from the directory's change log into the event log, and projected.
    await eventually(
      async () =>
        (
          await app.db.pool.query(
            `SELECT 1 FROM events
              WHERE type = 'EntryModified' AND data::text LIKE '%By socket%'`,
          )
        ).rowCount,
      { what: "the write captured into the log" },
    );
    const projected = await app.db.pool.query(
      "SELECT attributes->'title' AS title FROM projection_entries.entries WHERE dn = $1",
      [PROSSI],
    );
    t.same(projected.rows[0]?.title, ["By socket"]);
    const { all } = await sessions(app.db.pool);
    t.same(
      all.filter((s) => !s.by_socket).map((s) => s.application_name),
      [],
      "every session of annal's came by the socket",
    );

    // The same database over loopback TCP, as before.
    const tcp = new URL(admin);
    tcp.hostname = "127.0.0.1";
    tcp.pathname = `/${base.name}`;
    const { log, lines } = capturedLogger();
    const config = await loadConfig({
      configPath: (await configDir(t, "")).file,
      env: { DATABASE_URL: tcp.toString(), PORT: String(await freePort()) },
    });
    const api = await startAnnal({ config, only: "api", log });
    t.teardown(() => api.stop());
    t.match(
      lines.find((line) => String(line.msg).startsWith("annal serves"))?.database,
      new RegExp(`, over TCP to 127\\.0\\.0\\.1:${admin.port}$`),
    );
    const byTcp = await api.store.pool.query<{ server: string }>(
      "SELECT host(inet_server_addr()) AS server",
    );
    t.equal(byTcp.rows[0]?.server, "127.0.0.1", "connected over TCP");
    await api.stop();
  },
);
