import { SingleBar } from "cli-progress";

/**
 * A progress bar on standard error for long CLI work (replay, import): `label`, the bar, the
 * percentage, done/total `unit`, and the time left once it can be told.
 *
 * @example
 * const bar = progressBar("replay entries", "events");
 * bar.start(total, 0); bar.update(done); bar.stop();
 */
export function progressBar(label: string, unit: string): SingleBar {
  return new SingleBar({
    format: `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | eta {eta_formatted}`,
    stream: process.stderr,
    hideCursor: true,
    formatTime: formatEta,
  });
}

/**
 * The time left, `1h05m`, `3m20s`, `45s`; `--` while it cannot be told. cli-progress passes
 * "INF" (or NaN) before any progress, which its own formatter printed as `NFs`.
 */
export function formatEta(seconds: unknown): string {
  const t = typeof seconds === "number" ? seconds : Number(seconds);
  if (!Number.isFinite(t) || t < 0) return "--";
  const whole = Math.round(t);
  const pad = (n: number) => String(n).padStart(2, "0");
  if (whole >= 3600) return `${Math.floor(whole / 3600)}h${pad(Math.floor((whole % 3600) / 60))}m`;
  if (whole >= 60) return `${Math.floor(whole / 60)}m${pad(whole % 60)}s`;
  return `${whole}s`;
}
