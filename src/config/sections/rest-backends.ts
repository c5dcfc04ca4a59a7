import { z } from "zod";
import { parseUrl, text } from "../fields.ts";

const NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;

/** A header or query value: one string, or several (sent as repeated headers or parameters). */
function stringOrList() {
  return z.union([z.string(), z.array(z.string())], {
    error: "expected a string or an array of strings",
  });
}

function restBackend() {
  return z
    .looseObject(
      {
        name: text().regex(NAME, "expected a letter, then letters, digits, _ or -").meta({
          description:
            "The name `@rest(backend: ...)` uses: a letter, then letters, digits, `_` or `-`. Names are unique.",
          example: "hr",
        }),
        base: text()
          .refine(
            (base) =>
              /^\/(?!\/)/.test(base) ||
              ["http:", "https:"].includes(parseUrl(base)?.protocol ?? ""),
            {
              message:
                "expected a URL such as https://api.example.org/v1, or a path on annal itself such as /api",
            },
          )
          .meta({
            typeName: "URL (http:// or https://), or a path on annal itself",
            description:
              "Base URL; a request goes to `base` followed by the directive's `endpoint`. A path (`/`, `/api`) is annal's own server, `http://<host>:<port>` of `[server]` (after `PORT`), so it follows the configured port.",
            example: "https://hr.example.org/api/v2",
          }),
        headers: z
          .record(z.string(), stringOrList())
          .default({})
          .meta({
            description:
              "Headers of every request; the directive's own win. A list sends the header once per value.",
            example: { Authorization: "Bearer ${HR_API_TOKEN}" },
          }),
        query: z
          .record(z.string(), stringOrList())
          .default({})
          .meta({
            description:
              "Query parameters of every request; the directive's own win. A list sends the parameter once per value.",
            example: { tenant: "acme" },
          }),
        body: z
          .unknown()
          .optional()
          .meta({
            description:
              "Default payload parts, merged under the directive's `body` when both are objects.",
            example: { source: "annal" },
          }),
        timeoutMs: z
          .number()
          .int()
          .min(1)
          .max(600_000)
          .default(10_000)
          .meta({ description: "Time limit of one request, in milliseconds.", example: 5_000 }),
      },
      { error: "expected a table: [[graphql.rest]]" },
    )
    .transform((backend) => {
      const { name, base, headers, query, body, timeoutMs } = backend;
      // `$options` reaches every key of the entry, the ones annal reads and any others.
      const options: Readonly<Record<string, unknown>> = backend;
      return { name, base, headers, query, body, timeoutMs, options };
    });
}

// The product documents name this list `[[rest]]`; in annal `[rest]` is the REST channel's
// table, so the backends live under `[graphql]`, the only part that calls them.
export function restBackendsSection() {
  return z
    .array(restBackend(), { error: "expected an array of tables: [[graphql.rest]]" })
    .superRefine((backends, ctx) => {
      const seen = new Set<string>();
      backends.forEach((backend, index) => {
        if (seen.has(backend.name)) {
          ctx.addIssue({
            code: "custom",
            path: [index, "name"],
            message: `a backend named "${backend.name}" is already defined`,
          });
        }
        seen.add(backend.name);
      });
    })
    .default([])
    .meta({
      description:
        "The backends the `@rest` directive may call; no other URL can be reached from a schema. Other keys of an entry (an API key reference, a tenant id) are the backend's options, reachable as `$options.<key>`.",
    });
}

/** One resolved backend. */
export type RestBackendConfig = z.output<ReturnType<typeof restBackendsSection>>[number];
