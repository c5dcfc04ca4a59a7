import { z } from "zod";

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** `[log]`: what the process logs (pino, JSON lines on standard output). */
export function logSection() {
  return z
    .strictObject(
      {
        /** Least severe level written. Default `"info"`; `"silent"` writes nothing. */
        level: z
          .enum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(", ")}` })
          .default("info"),
      },
      { error: "expected a table: [log]" },
    )
    .prefault({});
}
