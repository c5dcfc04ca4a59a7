/**
 * Part of `npm run check`: writes the REST channel's OpenAPI description (from the demo
 * configuration, `describeFromConfig`) to a temporary file and lints it with Redocly's
 * recommended rules (`redocly.yaml`): any warning or error fails the check. The test
 * `test/rest/openapi-responses.test.ts` lints the document a running annal serves, with its
 * directory schema and custom endpoints.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { loadConfig } from "../config/index.ts";
import { describeFromConfig } from "../rest/index.ts";
import { packageVersion, SOURCE_ROOT } from "./version.ts";

/** Lints `document` with the repository's Redocly configuration; the report when it fails. */
export async function lintOpenApi(
  document: Record<string, unknown>,
): Promise<{ ok: boolean; report: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), "annal-openapi-"));
  try {
    const file = path.join(dir, "openapi.json");
    await writeFile(file, JSON.stringify(document, null, 2));
    const redocly = path.join(SOURCE_ROOT, "node_modules", "@redocly", "cli", "bin", "cli.js");
    try {
      const { stdout, stderr } = await promisify(execFile)(
        process.execPath,
        [
          redocly,
          "lint",
          file,
          "--config",
          path.join(SOURCE_ROOT, "redocly.yaml"),
          "--max-problems",
          "50",
        ],
        { cwd: dir, env: { ...process.env, REDOCLY_TELEMETRY: "off", NO_COLOR: "1" } },
      );
      const report = `${stdout}${stderr}`;
      // Warnings leave the exit status 0: they fail the check too.
      return { ok: !/You have \d+ warnings?/.test(report), report };
    } catch (error) {
      const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
      return { ok: false, report: `${stdout}${stderr}` };
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const config = await loadConfig({ configPath: path.join(SOURCE_ROOT, "ops/demo/annal.toml") });
  const { ok, report } = await lintOpenApi(describeFromConfig(config, await packageVersion()));
  if (!ok) {
    process.stderr.write(report);
    process.exit(1);
  }
  process.stdout.write("openapi: the REST channel's description passes redocly lint\n");
}
