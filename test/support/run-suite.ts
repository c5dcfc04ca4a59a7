/**
 * `npm test`: starts one embedded PostgreSQL for the whole run (unless DATABASE_URL names a
 * server to use), runs tap with the given arguments, and stops the server. Each test file
 * then creates its own database on it (test/support/postgres.ts).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbeddedPostgres } from "../../src/db/index.ts";
import { ensureTemplate } from "./template.ts";

const dataDir = mkdtempSync(path.join(tmpdir(), "annal-suite-pg-"));
const embedded = process.env.DATABASE_URL
  ? undefined
  : await startEmbeddedPostgres({ dataDir: path.join(dataDir, "data") });
const admin = process.env.DATABASE_URL ?? embedded!.url;
await ensureTemplate(admin);

const tap = spawn("tap", process.argv.slice(2), {
  stdio: "inherit",
  // TAP_TIMEOUT bounds the whole run as well as each file (tap's default is 30 s).
  env: { TAP_TIMEOUT: "1800", ...process.env, ANNAL_TEST_POSTGRES_URL: admin },
});
const code = await new Promise<number>((resolve) => tap.on("exit", (c) => resolve(c ?? 1)));
await embedded?.stop();
rmSync(dataDir, { recursive: true, force: true });
process.exit(code);
