import { z } from "zod";
import { readSpan, type Span } from "../../time/index.ts";
import { duration } from "../fields.ts";

/**
 * The stream kinds retention can fold: the prefix of a stream's id before its first `-`.
 * An entry's stream (`entry-<entryUUID>`) folds into its state at the horizon, which every
 * projection reads as the entry's first event; a workflow instance's (`workflow-<id>`), once
 * it finished, into its final state, which the engine and the projections fold on from.
 * Other kinds are kept whole.
 */
export const RETENTION_STREAM_KINDS = ["entry", "workflow"] as const;
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
              workflow: keep().optional().meta({
                description:
                  "How long the log keeps the streams of workflow instances that finished (completed, errored or cancelled), instead of `keep`; running ones are kept whole. Folded only as far as the entries' horizon reaches, so it needs `keep` or `entry`.",
                example: "2y",
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
    .superRefine((value, ctx) => {
      // A run's cut is placed by the entries' horizon: without one there is no run.
      if (value.streams.workflow && !(value.streams.entry ?? value.keep)) {
        ctx.addIssue({
          code: "custom",
          path: ["streams", "workflow"],
          message:
            "workflow streams are folded by the runs of entries' retention: set [retention] keep or [retention.streams] entry too",
        });
      }
    })
    .prefault({})
    .meta({
      description:
        "Retention: how long the event log keeps history. Checkpoints keep every answer after the horizon and replay; `annal log verify` starts from the horizon (`docs/retention.md`).",
    });
}
