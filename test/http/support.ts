import { Writable } from "node:stream";
import { parseConfig, type AnnalConfig } from "../../src/config/index.ts";
import type { Pool } from "../../src/db/index.ts";
import { createServer, type AnnalServer } from "../../src/http/index.ts";
import { createLogger } from "../../src/logger.ts";
import type { ProjectionStatus } from "../../src/projector/index.ts";

/** A logger whose JSON lines the test can read. */
export function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const text: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) {
        text.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { log: createLogger("info", { destination }), lines, text };
}

export function testServer(
  t: { teardown(fn: () => unknown): void },
  options: {
    pool: Pool;
    projectorStatus?: () => Promise<readonly ProjectionStatus[]>;
    readinessTimeoutMs?: number;
    config?: AnnalConfig;
  },
): { server: AnnalServer; logged: ReturnType<typeof capturedLogger> } {
  const logged = capturedLogger();
  const server = createServer({
    config: options.config ?? parseConfig("", { path: "test.toml", env: {} }),
    pool: options.pool,
    projectorStatus: options.projectorStatus ?? (async () => []),
    log: logged.log,
    readinessTimeoutMs: options.readinessTimeoutMs,
  });
  t.teardown(() => server.close());
  return { server, logged };
}
