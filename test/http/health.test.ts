import t from "tap";
import { parseConfig } from "../../src/config/index.ts";
import { createPool } from "../../src/db/index.ts";
import { freePort } from "../../src/ports.ts";
import { recordPassFailed, recordPassSucceeded } from "../../src/capture/index.ts";
import { testDatabase } from "../support/postgres.ts";
import { testServer } from "./support.ts";
import { allProjections } from "../../projections/index.ts";
import { Projector, waitForProjection } from "../../src/projector/index.ts";
import type { Pool } from "../../src/db/index.ts";
import { readHead } from "../../src/store/index.ts";

/** The projections brought to the log's head, as a running projector keeps them. */
async function projected(pool: Pool): Promise<void> {
  const projector = await Projector.start({
    pool,
    projections: allProjections,
    log: { info() {}, warn() {}, error() {} },
  });
  try {
    await waitForProjection(pool, "entries", await readHead(pool), 30_000);
  } finally {
    await projector.stop();
  }
}

t.test("/healthz answers ok while the process is up", async (t) => {
  const { pool } = await testDatabase(t);
  const { server } = testServer(t, { pool });
  const response = await server.inject({ method: "GET", url: "/healthz" });
  t.equal(response.statusCode, 200);
  t.same(response.json(), { status: "ok" });
});

t.test("/readyz is 200 with each projection's version, position and lag", async (t) => {
  const { pool } = await testDatabase(t);
  const { server } = testServer(t, {
    pool,
    projectorStatus: async () => [
      {
        name: "entries_current",
        version: 2,
        builtVersion: 2,
        position: { transactionId: "812", position: 40 },
        lag: 3,
      },
    ],
  });
  const response = await server.inject({ method: "GET", url: "/readyz" });
  t.equal(response.statusCode, 200);
  t.same(response.json(), {
    status: "ready",
    checks: {
      database: { status: "ok" },
      migrations: { status: "ok", pending: 0 },
      projections: { status: "ok" },
      capture: { status: "skipped", detail: "annal has no directory" },
    },
    projections: [{ name: "entries_current", version: 2, builtVersion: 2, position: 40, lag: 3 }],
    capture: null,
  });
});

const WITH_DIRECTORY = parseConfig(
  `[directory]
url = "ldap://127.0.0.1:1"
bindDN = "cn=admin,dc=example,dc=org"
password = "\${LDAP_PASSWORD}"
base = "dc=example,dc=org"`,
  { path: "test.toml", env: { LDAP_PASSWORD: "x" } },
);

t.test(
  "/readyz is 503 until capture's first import is recorded: before it nothing is captured",
  async (t) => {
    const { pool } = await testDatabase(t);
    const { server } = testServer(t, { pool, config: WITH_DIRECTORY });
    await recordPassSucceeded(pool, "accesslog");
    const building = await server.inject({ method: "GET", url: "/readyz" });
    t.equal(building.statusCode, 503);
    t.match(building.json().checks.capture, { status: "failed", code: "ANNAL_HISTORY_BUILDING" });
    await pool.query(
      "INSERT INTO capture_checkpoints (source, position) VALUES ('accesslog', '20261122083000.000001Z')",
    );
    const applying = await server.inject({ method: "GET", url: "/readyz" });
    t.equal(applying.statusCode, 503, "recorded, but not yet in the entries' projection");
    t.match(applying.json().checks.capture, {
      status: "failed",
      code: "ANNAL_HISTORY_BUILDING",
      detail: /not yet in the entries' projection/,
    });
    await projected(pool);
    t.equal((await server.inject({ method: "GET", url: "/readyz" })).statusCode, 200);
  },
);

t.test(
  "/readyz shows capture's checkpoint, lag and last error, and fails when it keeps failing",
  async (t) => {
    const { pool } = await testDatabase(t);
    const { server } = testServer(t, { pool, config: WITH_DIRECTORY });
    await pool.query(
      "INSERT INTO capture_checkpoints (source, position) VALUES ('accesslog', '20261122083000.000001Z')",
    );
    await projected(pool);
    await recordPassSucceeded(pool, "accesslog");
    let body = (await server.inject({ method: "GET", url: "/readyz" })).json();
    t.equal(body.status, "ready");
    t.same(body.checks.capture, { status: "ok" });
    t.match(body.capture, {
      source: "accesslog",
      checkpoint: "20261122083000.000001Z",
      checkpointAt: String,
      lastSuccessAt: String,
      lagSeconds: Number,
      consecutiveFailures: 0,
      lastError: null,
      changesNotRecorded: 0,
    });

    // Passes that fail as a whole (the directory unreachable): shown, and past three, unready.
    const unreachable = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), {
      code: "ECONNREFUSED",
    });
    for (let i = 1; i <= 3; i++) {
      await recordPassFailed(pool, "accesslog", unreachable);
      const response = await server.inject({ method: "GET", url: "/readyz" });
      body = response.json();
      t.equal(response.statusCode, i < 3 ? 200 : 503, `after ${i} failed passes`);
    }
    t.match(body.checks.capture, { status: "failed", code: "ANNAL_CAPTURE_FAILING" });
    t.match(body.capture, {
      consecutiveFailures: 3,
      lastError: { code: "ANNAL_CAPTURE_PASS_FAILED:ECONNREFUSED", at: String },
    });
    t.notMatch(JSON.stringify(body), /127\.0\.0\.1:1/, "our own words, not the error's");

    await recordPassSucceeded(pool, "accesslog");
    t.equal((await server.inject({ method: "GET", url: "/readyz" })).statusCode, 200);
  },
);

t.test(
  "/readyz is 503 when the database is unreachable, and says so without the cause",
  async (t) => {
    const port = await freePort(); // nothing listens there
    const pool = createPool(`postgres://annal:not-the-password@127.0.0.1:${port}/annal`, 2);
    t.teardown(() => pool.end());
    const { server, logged } = testServer(t, { pool });
    const response = await server.inject({ method: "GET", url: "/readyz" });
    t.equal(response.statusCode, 503);
    t.equal(response.headers["retry-after"], "5", "retry as the REST channel's 503 says");
    const body = response.json();
    t.equal(body.status, "unready");
    t.match(body.checks.database, { status: "failed", code: "ANNAL_DATABASE_UNREACHABLE" });
    t.equal(body.checks.migrations.status, "skipped");
    t.notMatch(response.body, /ECONNREFUSED|not-the-password/);
    t.ok(
      logged.lines.some((line) => line.code === "ANNAL_DATABASE_UNREACHABLE"),
      "the cause is logged",
    );
    t.notMatch(logged.text.join("\n"), /not-the-password/);
  },
);

t.test("/readyz is 503 while migrations are pending", async (t) => {
  const { pool } = await testDatabase(t, { migrated: false });
  const { server } = testServer(t, { pool });
  const response = await server.inject({ method: "GET", url: "/readyz" });
  t.equal(response.statusCode, 503);
  t.match(response.json().checks.migrations, {
    status: "failed",
    code: "ANNAL_MIGRATIONS_PENDING",
  });
  t.ok(response.json().checks.migrations.pending > 0);
});

t.test(
  "/readyz is 503 when the database records a migration this program does not know",
  async (t) => {
    const { pool } = await testDatabase(t);
    await pool.query(
      "INSERT INTO migrations (id, name, hash) VALUES (99, 'from-the-future', 'unknown')",
    );
    const { server, logged } = testServer(t, { pool });
    const response = await server.inject({ method: "GET", url: "/readyz" });
    t.equal(response.statusCode, 503);
    t.match(response.json().checks.migrations, { code: "WF_DATABASE_MIGRATION_MISMATCH" });
    t.ok(logged.lines.some((line) => line.recordedKey === "99_from-the-future"));
  },
);

t.test("/readyz is 503 when the projections' status cannot be read", async (t) => {
  const { pool } = await testDatabase(t);
  const { server } = testServer(t, {
    pool,
    projectorStatus: () => new Promise(() => {}), // never answers
    readinessTimeoutMs: 200,
  });
  const response = await server.inject({ method: "GET", url: "/readyz" });
  t.equal(response.statusCode, 503);
  t.match(response.json().checks.projections, { code: "ANNAL_READINESS_TIMEOUT" });
});
