import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** One registry per process, served at `GET /metrics` in Prometheus text format. */
export const metrics = new Registry();
// Node's default metrics are named process_… and nodejs_… already: `annal_` makes them
// annal_process_cpu_seconds_total (a prefix of annal_process_ doubled the word).
collectDefaultMetrics({ register: metrics, prefix: "annal_" });
// prom-client names three gauges `…_total`, a suffix Prometheus keeps for counters (promtool
// refuses them). Each is the sum of its by-type gauge beside it: `sum(annal_nodejs_active_handles)`.
for (const name of ["handles", "requests", "resources"]) {
  metrics.removeSingleMetric(`annal_nodejs_active_${name}_total`);
}

export const eventsAppended = new Counter({
  name: "annal_events_appended_total",
  help: "Events appended to the event store by this process.",
  registers: [metrics],
});

export const projectionPosition = new Gauge({
  name: "annal_projection_position",
  help: "The global position of the last event a projection has applied.",
  labelNames: ["projection"],
  registers: [metrics],
});

export const projectionLag = new Gauge({
  name: "annal_projection_lag_events",
  help: "Readable events a projection has not applied yet.",
  labelNames: ["projection"],
  registers: [metrics],
});

export const projectorBatchReads = new Counter({
  name: "annal_projector_batch_reads_total",
  help: "Batches of the log the projections applied: read from the database, or shared from another projection's read.",
  labelNames: ["source"],
  registers: [metrics],
});

export const httpDuration = new Histogram({
  name: "annal_http_request_duration_seconds",
  help: "HTTP request latency by method, route and status.",
  labelNames: ["method", "route", "status"],
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metrics],
});

export const captureLastSuccess = new Gauge({
  name: "annal_capture_last_success_timestamp_seconds",
  help: "When this process's last directory capture pass succeeded (Unix time).",
  labelNames: ["source"],
  registers: [metrics],
});

/**
 * Every capture source, the known values of the `source` label of capture's failure counters:
 * they are at 0 for each from the start, so `rate()` and alerts see the series before the
 * first failure. Capture checks that these are its sources, every one (`capture/status.ts`).
 */
export const CAPTURE_SOURCES = ["accesslog", "changelog", "ad", "poll"] as const;

export const captureFailures = new Counter({
  name: "annal_capture_pass_failures_total",
  help: "Directory capture passes that failed as a whole in this process.",
  labelNames: ["source"],
  registers: [metrics],
});

export const captureNotRecorded = new Counter({
  name: "annal_capture_changes_not_recorded_total",
  help: "Directory changes this process could not record (noted as DirectoryChangeNotRecorded).",
  labelNames: ["source"],
  registers: [metrics],
});

export const captureWithoutIdentity = new Counter({
  name: "annal_capture_entries_without_identity_total",
  help: "Entries read from the directory (import, snapshots, capture's passes: a write of such an entry) that had no identity annal can use (entryUUID, nsUniqueId, objectGUID) and were not recorded.",
  labelNames: ["source"],
  registers: [metrics],
});

for (const source of CAPTURE_SOURCES) {
  captureFailures.inc({ source }, 0);
  captureNotRecorded.inc({ source }, 0);
}
