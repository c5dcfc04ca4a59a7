import { z } from "zod";
import { readSpan, type Span } from "../../time/index.ts";
import { duration } from "../fields.ts";

/**
 * The stream kinds retention can fold: the prefix of a stream's id before its first `-`.
 * An entry's stream (`entry-<entryUUID>`) folds into its state at the horizon, which every
 * projection reads as the entry's first event. Other kinds (a workflow instance replays its
 * whole stream to run) are kept whole until they can be folded without changing what they do.
 */
export const RETENTION_STREAM_KINDS = ["entry"] as const;
export type RetentionStreamKind = (typeof RETENTION_STREAM_KINDS)[number];

const KEEP_FORMS = 'a length of time such as "7y", "18w", "90d" or "P1Y6M"';

/** How long to keep: a duration that may count years and months (`7y`, `P1Y6M`), longer than 0. */
function keep() {
  return z
    .string({ error: `expected ${KEEP_FORMS}` })
    .transform((value, ctx): Span => {
      const span = readSpan(value);
      if (!span || (span.ms <= 0 && span.months <= 0)) {
        ctx.addIssue({ code: "custom", message: `"${value}" is not ${KEEP_FORMS}` });
        return z.NEVER;
      }
      return span;
    })
    .meta({ typeName: "duration (years allowed)" });
}

export function retentionSection() {
  return z
    .strictObject(
      {
        keep: keep().optional().meta({
          description:
            "How long the log keeps events, counted back from now on `occurred_at`: older ones are folded into one checkpoint per stream at the horizon and removed (`docs/retention.md`). Without it nothing is removed.",
          example: "7y",
        }),
        interval: duration().prefault("1d").meta({
          description:
            "Between two periodic retention runs in the workers part (a duration); the first runs a minute after start. `annal retention run` runs one at once.",
          example: "1d",
        }),
        streams: z
          .strictObject(
            {
              entry: keep().optional().meta({
                description:
                  "How long the log keeps entries' streams (`entry-…`), instead of `keep`.",
                example: "1y",
              }),
            } satisfies Record<RetentionStreamKind, unknown>,
            {
              error: (issue) =>
                issue.code === "unrecognized_keys"
                  ? `retention folds only these stream kinds: ${RETENTION_STREAM_KINDS.join(", ")}`
                  : "expected a table: [retention.streams]",
            },
          )
          .prefault({})
          .meta({ description: "How long to keep each kind of stream, by the kind's name." }),
      },
      { error: "expected a table: [retention]" },
    )
    .prefault({})
    .meta({
      description:
        "Retention: how long the event log keeps history. Checkpoints keep every answer after the horizon and replay; `annal log verify` starts from the horizon (`docs/retention.md`).",
    });
}
