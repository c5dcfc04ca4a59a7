import { z } from "zod";
import { integer, timeZone } from "../fields.ts";

function exportLimits() {
  return z
    .strictObject(
      {
        maxRows: integer(0, Number.MAX_SAFE_INTEGER).default(1_000_000).meta({
          description:
            "Most rows one export may hold; `0` for no limit. An export that would hold more is refused with 400 `ANNAL_EXPORT_TOO_LARGE` before anything is sent.",
          example: 0,
        }),
        maxConcurrent: integer(1, 1_000).default(4).meta({
          description: "Most exports this process streams at once; more get 429.",
          example: 8,
        }),
        batchSize: integer(1, 100_000)
          .default(1_000)
          .meta({ description: "Rows read from the database cursor per round trip." }),
      },
      { error: "expected a table: [rest.export]" },
    )
    .prefault({})
    .meta({ description: "Limits of export mode (`filename=`)." });
}

export function restSection() {
  return z
    .strictObject(
      {
        enabled: z
          .boolean({ error: "expected true or false" })
          .default(true)
          .meta({ description: "Serve the channel.", example: false }),
        pageSize: integer(1, 100_000).default(50).meta({
          description:
            "Entries or changes per page when the request names no `first`, `last` or `limit`. At most `maxPageSize`.",
          example: 100,
        }),
        maxPageSize: integer(1, 100_000)
          .default(1_000)
          .meta({ description: "The largest page a request may ask for.", example: 5_000 }),
        timeZone: timeZone().default("UTC").meta({
          description:
            "The time zone in which `since` phrases (`today`, `this week`, ...) and ISO times without an offset are read.",
          example: "Europe/Berlin",
        }),
        export: exportLimits(),
      },
      { error: "expected a table: [rest]" },
    )
    .superRefine((rest, ctx) => {
      if (rest.pageSize > rest.maxPageSize) {
        ctx.addIssue({
          code: "custom",
          path: ["pageSize"],
          message: "must not be larger than maxPageSize",
        });
      }
    })
    .prefault({})
    .meta({
      description: "The directory REST channel under `/api`: search, lookup, changes, export.",
    });
}

/** The resolved `[rest]` section. */
export type RestConfig = z.output<ReturnType<typeof restSection>>;
