import { z } from "zod";
import { integer } from "../fields.ts";

/** An IANA time zone name that this Node.js knows (`"UTC"`, `"Europe/Berlin"`). */
function timeZone() {
  const expected = 'expected an IANA time zone such as "UTC" or "Europe/Berlin"';
  return z.string({ error: expected }).refine((name) => {
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: name });
      return name !== "";
    } catch {
      return false;
    }
  }, expected);
}

/** `[rest.export]`: limits of export mode (`filename=`). */
function exportLimits() {
  return z
    .strictObject(
      {
        /**
         * Most rows one export may hold. Default `1000000`; `0` for no limit. An export that
         * would hold more is refused with 400 `ANNAL_EXPORT_TOO_LARGE` before anything is sent.
         */
        maxRows: integer(0, Number.MAX_SAFE_INTEGER).default(1_000_000),
        /** Most exports this process streams at once; more get 429. Default `4`. */
        maxConcurrent: integer(1, 1_000).default(4),
        /** Rows read from the database cursor per round trip. Default `1000`. */
        batchSize: integer(1, 100_000).default(1_000),
      },
      { error: "expected a table: [rest.export]" },
    )
    .prefault({});
}

/** `[rest]`: the directory REST channel under `/api` (search, lookup, changes, export). */
export function restSection() {
  return z
    .strictObject(
      {
        /** Serve the channel. Default `true`. */
        enabled: z.boolean({ error: "expected true or false" }).default(true),
        /** Entries or changes per page when the request names no `first`/`last`/`limit`. Default `50`. */
        pageSize: integer(1, 100_000).default(50),
        /** The largest page a request may ask for. Default `1000`. */
        maxPageSize: integer(1, 100_000).default(1_000),
        /**
         * The time zone in which `since` phrases (`today`, `this week`, ...) and ISO times
         * without an offset are read. Default `"UTC"`.
         */
        timeZone: timeZone().default("UTC"),
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
    .prefault({});
}

/** The resolved `[rest]` section. */
export type RestConfig = z.output<ReturnType<typeof restSection>>;
