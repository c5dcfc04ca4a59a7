import { z } from "zod";
import { text, urlWithScheme } from "../fields.ts";

const NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;

/** A header or query value: one string, or several (sent as repeated headers or parameters). */
function stringOrList() {
  return z.union([z.string(), z.array(z.string())], {
    error: "expected a string or an array of strings",
  });
}

/** One REST backend of the `@rest` directive. */
function restBackend() {
  return z
    .looseObject(
      {
        /** The name `@rest(backend: ...)` uses. Required; a letter, then letters, digits, `_`, `-`. */
        name: text().regex(NAME, "expected a letter, then letters, digits, _ or -"),
        /** Base URL; a request goes to `base` followed by the directive's `endpoint`. Required. */
        base: urlWithScheme(["http:", "https:"], "https://api.example.org/v1"),
        /** Headers of every request; the directive's own win. Default none. */
        headers: z.record(z.string(), stringOrList()).default({}),
        /** Query parameters of every request; the directive's own win. Default none. */
        query: z.record(z.string(), stringOrList()).default({}),
        /** Default payload parts, merged under the directive's `body` when both are objects. */
        body: z.unknown().optional(),
        /** Time limit of one request, in ms. Default 10000. */
        timeoutMs: z.number().int().min(1).max(600_000).default(10_000),
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

/**
 * `[[graphql.rest]]`: the backends the `@rest` directive may call; no other URL can be reached
 * from a schema. Other keys of an entry (an API key reference, a tenant id) are the backend's
 * options, reachable as `$options.<key>`. Names are unique. Default none.
 *
 * The product documents name this list `[[rest]]`; in annal `[rest]` is the REST channel's
 * table, so the backends live under `[graphql]`, the only part that calls them.
 */
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
    .default([]);
}

/** One resolved backend. */
export type RestBackendConfig = z.output<ReturnType<typeof restBackendsSection>>[number];
