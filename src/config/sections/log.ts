import { z } from "zod";

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

export function logSection() {
  return z
    .strictObject(
      {
        level: z
          .enum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(", ")}` })
          .default("info")
          .meta({
            description: 'Least severe level written; `"silent"` writes nothing.',
            example: "debug",
          }),
      },
      { error: "expected a table: [log]" },
    )
    .prefault({})
    .meta({
      description:
        "What `annal start` logs on standard output (pino): JSON lines to a pipe or a file, lines for a person at a terminal.",
    });
}
