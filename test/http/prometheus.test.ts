import { spawn } from "node:child_process";
import t, { type Test } from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { parseConfig } from "../../src/config/index.ts";
import { freePort } from "../../src/ports.ts";
import { capturedLogger } from "./support.ts";
import { testDatabase } from "../support/postgres.ts";

/**
 * `promtool check metrics` (Debian's `prometheus` package; `.ci/run` installs it) over `text`:
 * its exit code and what it printed. A missing promtool fails the test, never skips it.
 */
function promtoolCheckMetrics(text: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("promtool", ["check", "metrics"], { stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", (error) =>
      reject(new Error(`promtool could not run (install Debian's prometheus): ${error.message}`)),
    );
    child.on("close", (code) => resolve({ code, output }));
    child.stdin.end(text);
  });
}

async function runningAnnal(t: Test) {
  const { url } = await testDatabase(t);
  const config = parseConfig("", {
    path: "test.toml",
    env: { DATABASE_URL: url, PORT: String(await freePort()) },
  });
  const annal = await startAnnal({ config, log: capturedLogger().log });
  t.teardown(() => annal.stop());
  return annal;
}

t.test("promtool check metrics passes on a running annal's /metrics", async (t) => {
  const annal = await runningAnnal(t);
  // Some traffic first, so the latency histogram has series to check.
  await (await fetch(`${annal.url}/healthz`)).text();
  await (await fetch(`${annal.url}/no/such/route`)).text();
  const response = await fetch(`${annal.url}/metrics`);
  t.equal(response.status, 200);
  const text = await response.text();
  t.match(text, /^annal_http_request_duration_seconds_count\{/m);
  const { code, output } = await promtoolCheckMetrics(text);
  t.equal(output, "", "promtool finds nothing to say");
  t.equal(code, 0);
  t.notMatch(text, /^# TYPE \S+_total gauge$/m, "no gauge is named like a counter");
});

t.test("failure counters are at 0 for each capture source from the start", async (t) => {
  const annal = await runningAnnal(t);
  const text = await (await fetch(`${annal.url}/metrics`)).text();
  for (const counter of [
    "annal_capture_pass_failures_total",
    "annal_capture_changes_not_recorded_total",
  ]) {
    for (const source of ["accesslog", "poll"]) {
      t.match(
        text,
        new RegExp(`^${counter}\\{source="${source}"\\} 0$`, "m"),
        `${counter} ${source}`,
      );
    }
  }
});
