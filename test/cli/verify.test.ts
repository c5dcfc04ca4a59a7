import t from "tap";
import { checkNodeVersion } from "../../src/cli/verify.ts";
import { freePort } from "../../src/db/index.ts";
import { testDatabase } from "../support/postgres.ts";
import { configDir, runAnnal } from "./support.ts";

t.test("annal verify prints one ok line per check and passes", async (t) => {
  const { url } = await testDatabase(t);
  const { file } = await configDir(t, "");
  const run = await runAnnal(["verify", "--config", file], { env: { DATABASE_URL: url } });
  t.equal(run.code, 0, run.stderr);
  const lines = run.stdout.trimEnd().split("\n");
  t.match(lines, [
    /^ok node: v\d+/,
    `ok config: ${file}`,
    /^ok database: postgres:\/\/.+ answers$/,
    "ok migrations: current",
  ]);
});

t.test("annal verify says pending migrations will be applied, and passes", async (t) => {
  const { url } = await testDatabase(t, { migrated: false });
  const { file } = await configDir(t, "");
  const run = await runAnnal(["verify", "--config", file], { env: { DATABASE_URL: url } });
  t.equal(run.code, 0, run.stderr);
  t.match(
    run.stdout,
    /^ok migrations: \d+ pending \(ANNAL_MIGRATIONS_PENDING\); annal start applies them$/m,
  );
});

t.test("annal verify fails on an unreachable database after the checks before it", async (t) => {
  const { file } = await configDir(t, "");
  const url = `postgres://annal:pw-not-shown@127.0.0.1:${await freePort()}/annal`;
  const run = await runAnnal(["verify", "--config", file], { env: { DATABASE_URL: url } });
  t.equal(run.code, 1);
  t.match(run.stdout, /^ok node: .+\nok config: .+\n$/);
  t.match(run.stderr, /^annal: ANNAL_DATABASE_UNREACHABLE: .+\nannal: hint: /);
  t.notMatch(run.stderr, /pw-not-shown/);
});

t.test("annal verify fails on a migration this program does not know", async (t) => {
  const { url, pool } = await testDatabase(t);
  await pool.query("INSERT INTO migrations (id, name, hash) VALUES (99, 'from-the-future', 'x')");
  const { file } = await configDir(t, "");
  const run = await runAnnal(["verify", "--config", file], { env: { DATABASE_URL: url } });
  t.equal(run.code, 1);
  t.match(run.stderr, /^annal: WF_DATABASE_MIGRATION_MISMATCH: .*99_from-the-future/);
});

t.test("Node.js older than 26 is ANNAL_NODE_VERSION_MISMATCH", async (t) => {
  t.throws(() => checkNodeVersion("v20.20.2"), { code: "ANNAL_NODE_VERSION_MISMATCH" });
  t.doesNotThrow(() => checkNodeVersion("v26.10.0"));
  t.doesNotThrow(() => checkNodeVersion("v27.0.0"));
});
