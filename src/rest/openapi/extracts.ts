import { TABLE_NAMES } from "../../extract/index.ts";

type Json = Record<string, unknown>;

const problems = (...statuses: string[]): Json =>
  Object.fromEntries(
    statuses.map((status) => [status, { $ref: `#/components/responses/Problem${status}` }]),
  );

/** The Parquet extracts' path: one table of the history whole, as one file. */
export function extractPaths(): Json {
  return {
    "/api/extracts/{table}.parquet": {
      get: {
        operationId: "getExtract",
        summary: "One table of the history as a Parquet file",
        description:
          "The table whole, as `annal extract` writes it on a first run but in one file, streamed as it is written: `events` (the log), `changes` (the change feed), `entry_versions` (one row per version of each entry, `valid_from` to `valid_to`, the attributes of the configured types as typed columns and the rest as JSON), `memberships` (each stretch of time a group listed a member), `workflow_instances` and `workflow_steps`. Timestamps are Parquet timestamps (UTC), multi-valued attributes lists; Snappy-compressed, with statistics. Needs the `export` access function. For a folder kept up to date run by run, use `annal extract <dir>` (docs/analytics.md).",
        tags: ["extracts"],
        parameters: [
          {
            name: "table",
            in: "path",
            required: true,
            description: "The table.",
            schema: { type: "string", enum: [...TABLE_NAMES] },
          },
        ],
        responses: {
          "200": {
            description: "The Parquet file, streamed, with `Content-Disposition: attachment`.",
            headers: { "Cache-Control": { $ref: "#/components/headers/NoStore" } },
            content: {
              "application/vnd.apache.parquet": {
                schema: { type: "string", contentMediaType: "application/vnd.apache.parquet" },
              },
            },
          },
          ...problems("401", "403", "404", "414", "429", "431", "503"),
        },
      },
    },
  };
}
