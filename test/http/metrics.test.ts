import t from "tap";
import { metrics } from "../../src/metrics.ts";
import { testDatabase } from "../support/postgres.ts";
import { testServer } from "./support.ts";

t.test("/metrics serves the registry in Prometheus text format", async (t) => {
  const { pool } = await testDatabase(t);
  const { server } = testServer(t, { pool });
  await server.inject({ method: "GET", url: "/healthz" });
  const response = await server.inject({ method: "GET", url: "/metrics" });
  t.equal(response.statusCode, 200);
  t.equal(response.headers["content-type"], metrics.contentType);
  t.match(response.body, /^# TYPE annal_events_appended_total counter$/m);
  t.match(response.body, /^annal_process_cpu_seconds_total \d/m, "Node's metrics, prefixed once");
  t.match(response.body, /^annal_nodejs_heap_size_used_bytes \d/m);
  t.notMatch(response.body, /annal_process_process_|annal_process_nodejs_/);
  t.match(response.body, /^# TYPE annal_capture_pass_failures_total counter$/m);
  t.match(response.body, /^# TYPE annal_capture_changes_not_recorded_total counter$/m);
  t.match(
    response.body,
    /^annal_http_request_duration_seconds_count\{method="GET",route="\/healthz",status="200"\} \d+$/m,
  );
});

t.test("request latency is labelled by route pattern, never by the raw URL", async (t) => {
  const { pool } = await testDatabase(t);
  const { server } = testServer(t, { pool });
  server.get("/things/:id", async () => ({ ok: true }));
  await server.inject({ method: "GET", url: "/things/4711" });
  await server.inject({ method: "GET", url: "/no/such/route/1234" });
  const body = (await server.inject({ method: "GET", url: "/metrics" })).body;
  t.match(body, /route="\/things\/:id",status="200"/);
  t.match(body, /route="\(unmatched\)",status="404"/);
  t.notMatch(body, /4711|1234/);
});
