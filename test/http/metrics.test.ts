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
  // The raw ids are words no metric value can spell; digits could turn up in any
  // sample (a byte count, a CPU time) and make the check fail by chance.
  await server.inject({ method: "GET", url: "/things/quokka" });
  await server.inject({ method: "GET", url: "/no/such/route/wombat" });
  const body = (await server.inject({ method: "GET", url: "/metrics" })).body;
  t.match(body, /route="\/things\/:id",status="200"/);
  t.match(body, /route="\(unmatched\)",status="404"/);
  t.notMatch(body, /quokka|wombat/);
});
