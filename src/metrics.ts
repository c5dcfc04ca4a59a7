import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** One registry per process, served at `GET /metrics` in Prometheus text format. */
export const metrics = new Registry();
collectDefaultMetrics({ register: metrics, prefix: "annal_process_" });

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

export const httpDuration = new Histogram({
  name: "annal_http_request_duration_seconds",
  help: "HTTP request latency by method, route and status.",
  labelNames: ["method", "route", "status"],
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metrics],
});
