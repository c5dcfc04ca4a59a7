import { SESSION_COOKIE } from "../../auth/index.ts";
import type { DirectorySchema } from "../../directory/index.ts";
import type { AttributeCatalog } from "../catalog.ts";
import { typeAttributes } from "../catalog.ts";
import type { ServedType } from "../context.ts";
import { EXPORT_FORMATS } from "../export/formats.ts";
import { MAX_URL_LENGTH } from "../../http/index.ts";
import { REST_ERROR_CODES } from "./error-codes.ts";
import { auditPaths, auditSchemas } from "./audit.ts";
import { extractPaths } from "./extracts.ts";
import { parameterComponents } from "./parameters.ts";
import { commonSchemas, entrySchema, searchResponseSchema } from "./schemas.ts";

type Json = Record<string, unknown>;
const param = (name: string): Json => ({ $ref: `#/components/parameters/${name}` });
const schemaRef = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const header = (name: string): Json => ({ $ref: `#/components/headers/${name}` });

const PROBLEM_RESPONSES: Readonly<Record<string, { description: string }>> = {
  "400": { description: "Bad input" },
  "401": { description: "No valid credentials (bearer token or session cookie)" },
  "403": { description: "The account lacks the access function" },
  "404": { description: "Not found" },
  "410": { description: "Gone: the moment asked for is before the retention horizon" },
  "406": { description: "Not acceptable: the `Accept` header allows nothing the route answers in" },
  "414": {
    description: `URI too long: the path and query string over ${MAX_URL_LENGTH} characters`,
  },
  "429": { description: "Too many exports at once" },
  "431": { description: "The request line and header fields are too large" },
  "503": {
    description:
      "The database does not answer, or the history is still being built (a first start: `ANNAL_HISTORY_BUILDING`, with `Retry-After`)",
  },
};

function problemResponses(): Json {
  return Object.fromEntries(
    Object.entries(PROBLEM_RESPONSES).map(([status, { description }]) => {
      const codes = Object.entries(REST_ERROR_CODES)
        .filter(([, info]) => String(info.status) === status)
        .map(([code, info]) => `- \`${code}\`: ${info.meaning}`);
      return [
        `Problem${status}`,
        {
          description: `${description}. \`code\` is one of:\n${codes.join("\n")}`,
          ...(status === "401"
            ? { headers: { "WWW-Authenticate": header("WWWAuthenticate") } }
            : {}),
          ...(status === "429" ? { headers: { "Retry-After": header("RetryAfter") } } : {}),
          content: { "application/problem+json": { schema: schemaRef("Problem") } },
        },
      ];
    }),
  );
}

const errors = (...statuses: string[]): Json =>
  Object.fromEntries(
    statuses.map((status) => [status, { $ref: `#/components/responses/Problem${status}` }]),
  );

function changesOperation(operationId: string, summary: string, tag: string, perEntry: boolean) {
  return {
    operationId,
    summary,
    tags: [tag],
    parameters: [
      ...(perEntry ? [param("id")] : []),
      param("first"),
      param("after"),
      param("last"),
      param("before"),
      param("limit"),
      param("range"),
      param("since"),
      param("during"),
      param("changeType"),
      param("entryType"),
      param("actor"),
      param("affects"),
      param("adds"),
      param("includeChanges"),
      param("prefer"),
    ],
    responses: {
      "200": {
        description: "A page of changes, oldest first.",
        headers: {
          "Cache-Control": header("NoStore"),
          "Preference-Applied": header("PreferenceApplied"),
          "Annal-Ignored-Parameters": header("IgnoredParameters"),
          "Annal-Unknown-Attributes": header("UnknownAttributes"),
        },
        content: { "application/json": { schema: schemaRef("ChangesResponse") } },
      },
      ...errors("400", "401", "403", ...(perEntry ? ["404"] : []), "406", "414", "431", "503"),
    },
  };
}

function typePaths(type: ServedType): Json {
  const { names } = type;
  const base = `/api/entries/${names.path}`;
  const tag = names.name;
  const exportContent = Object.fromEntries(
    EXPORT_FORMATS.filter((format) => format.name !== "json").map((format) => [
      format.contentType(format.options.parse({})).split(";")[0],
      {
        schema:
          format.name === "json-ld"
            ? {
                // A JSON document: what a client that reads the media type parses it as.
                type: "object",
                required: ["@context", "@graph"],
                properties: {
                  "@context": { type: "object" },
                  "@graph": { type: "array", items: { type: "object" } },
                },
                description: `the ${format.name} file (${format.extensions.join(", ")})`,
              }
            : {
                type: "string",
                description: `the ${format.name} file (${format.extensions.join(", ")})`,
              },
      },
    ]),
  );
  return {
    [base]: {
      get: {
        operationId: names.operations.search,
        // The configured type served here, as changes name it (`entryType`).
        "x-annal-entry-type": names.name,
        summary: `Search ${names.path}`,
        description: `Entries of type "${names.name}" matching \`filter\`, a page at a time (keyset pagination: pages never repeat or skip an entry), now or \`at\` a past moment. With \`filename\`, the whole result as a file. With \`during\`, the entries that matched at any moment of an interval, each with when.`,
        tags: [tag],
        parameters: [
          param("filter"),
          param("fields"),
          param("sort"),
          param("first"),
          param("after"),
          param("last"),
          param("before"),
          param("limit"),
          param("includeSearch"),
          param("filename"),
          param("export"),
          param("atSearch"),
          param("during"),
          param("prefer"),
        ],
        responses: {
          "200": {
            description:
              "A page of entries; in export mode (`filename`), the file, streamed, with `Content-Disposition: attachment`.",
            headers: {
              "Cache-Control": header("NoStore"),
              "Preference-Applied": header("PreferenceApplied"),
              "Annal-Ignored-Parameters": header("IgnoredParameters"),
              "Annal-Unknown-Attributes": header("UnknownAttributes"),
              "Content-Disposition": header("ContentDisposition"),
            },
            content: {
              "application/json": {
                schema: {
                  oneOf: [
                    schemaRef(names.components.searchResponse),
                    {
                      type: "array",
                      items: schemaRef(names.components.entry),
                      description: "export mode, .json",
                    },
                  ],
                },
              },
              ...exportContent,
            },
          },
          ...errors("400", "401", "403", "404", "406", "410", "414", "429", "431", "503"),
        },
      },
    },
    [`${base}/{id}`]: {
      get: {
        operationId: names.operations.lookup,
        summary: `Look up one ${names.name}`,
        description:
          "One entry, as it is now or as it was `at` a moment. Conditional requests: `If-None-Match` with the weak ETag, or `If-Modified-Since`, get 304 when unchanged.",
        tags: [tag],
        parameters: [
          param("id"),
          param("at"),
          param("fields"),
          param("prefer"),
          param("ifNoneMatch"),
          param("ifModifiedSince"),
        ],
        responses: {
          "200": {
            description: "The entry.",
            headers: {
              ETag: header("ETag"),
              "Last-Modified": header("LastModified"),
              "Cache-Control": header("Revalidate"),
              "Preference-Applied": header("PreferenceApplied"),
              "Annal-Ignored-Parameters": header("IgnoredParameters"),
              "Annal-Unknown-Attributes": header("UnknownAttributes"),
            },
            content: { "application/json": { schema: schemaRef(names.components.entry) } },
          },
          "304": {
            description: "Not modified: the representation the ETag (or date) names is current.",
            headers: { ETag: header("ETag"), "Cache-Control": header("Revalidate") },
          },
          ...errors("400", "401", "403", "404", "406", "410", "414", "431", "503"),
        },
      },
    },
    [`${base}/{id}/changes`]: {
      get: changesOperation(names.operations.changes, `Changes of one ${names.name}`, tag, true),
    },
    [`${base}/{id}/memberships`]: {
      get: {
        operationId: names.operations.memberships,
        summary: `Groups of one ${names.name} over time`,
        description:
          "Each group the entry belonged to during the interval (default: ever), with from/to, including groups reached through nested groups (`via`), from the entries' recorded versions; renames of the entry and the groups are followed.",
        tags: [tag],
        parameters: [param("id"), param("during"), param("prefer")],
        responses: {
          "200": {
            description: "The groups, by DN.",
            headers: {
              "Cache-Control": header("NoStore"),
              "Preference-Applied": header("PreferenceApplied"),
              "Annal-Ignored-Parameters": header("IgnoredParameters"),
            },
            content: { "application/json": { schema: schemaRef("MembershipsResponse") } },
          },
          ...errors("400", "401", "403", "404", "406", "410", "414", "431", "503"),
        },
      },
    },
  };
}

const DESCRIPTION = `Directory entries and their complete history, read from annal's projections of its event log (never from the directory live).

**Access.** Every data route needs an account with the \`read\` access function (\`export\` too for exports): a service account's \`Authorization: Bearer <token>\` (\`annal token create --name <name> --access read,export\`), or a person's \`${SESSION_COOKIE}\` cookie from signing in at \`/auth/login\`. This description and the documentation at \`/api\` are public.

**Errors** are RFC 9457 problem details (\`application/problem+json\`) with a stable \`code\`; no input makes the channel answer 500.

**Names.** Each configured entry type is served at \`/api/entries/<plural>\`; an empty query parameter counts as absent; a parameter given twice is refused.`;

export interface DescriptionInput {
  readonly version: string;
  readonly types: readonly ServedType[];
  readonly catalog: AttributeCatalog;
  readonly schema: DirectorySchema | undefined;
  readonly limits: { pageSize: number; maxPageSize: number; timeZone: string };
}

/** The OpenAPI 3.1 description of the channel, from the configured types and the schema. */
export function openApiDocument(input: DescriptionInput): Json {
  const typeSchemas = Object.fromEntries(
    input.types.flatMap((type) => [
      [
        type.names.components.entry,
        entrySchema(type.names, typeAttributes(input.catalog, input.schema, type.filter)),
      ],
      [type.names.components.searchResponse, searchResponseSchema(type.names)],
    ]),
  );
  return {
    openapi: "3.1.0",
    info: {
      title: "annal directory REST channel",
      version: input.version,
      description: DESCRIPTION,
    },
    servers: [{ url: "/" }],
    // Either credential will do: a service account's bearer token, or a person's session.
    security: [{ bearerAuth: [] }, { sessionCookie: [] }],
    tags: [
      ...input.types.map((type) => ({
        name: type.names.name,
        description: `Entries under ${type.base} matching ${type.filter}`,
      })),
      { name: "changes", description: "The change feed of every entry" },
      { name: "audit", description: "The log's hash chain and the keys that sign exports" },
      { name: "extracts", description: "The history as Parquet files, for analytics" },
      { name: "description", description: "This description and the documentation" },
    ],
    paths: {
      ...Object.assign({}, ...input.types.map(typePaths)),
      "/api/changes": {
        get: changesOperation("getChanges", "The change feed", "changes", false),
      },
      ...auditPaths(),
      ...extractPaths(),
      "/api": {
        get: {
          operationId: "getApiDescription",
          summary: "Documentation, or this description",
          description:
            "By content negotiation: a browser (`Accept: text/html`) gets the interactive documentation; `application/json` or `application/yaml` the description.",
          tags: ["description"],
          security: [],
          responses: {
            "200": {
              description: "The documentation page or the description.",
              content: { "text/html": {}, "application/json": {}, "application/yaml": {} },
            },
            ...errors("406", "414", "431"),
          },
        },
      },
      "/api.json": {
        get: {
          operationId: "getApiDescriptionJson",
          summary: "This description as JSON",
          tags: ["description"],
          security: [],
          responses: {
            "200": { description: "The description.", content: { "application/json": {} } },
            ...errors("414", "431"),
          },
        },
      },
      "/api.yaml": {
        get: {
          operationId: "getApiDescriptionYaml",
          summary: "This description as YAML",
          tags: ["description"],
          security: [],
          responses: {
            "200": { description: "The description.", content: { "application/yaml": {} } },
            ...errors("414", "431"),
          },
        },
      },
    },
    components: {
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description: "A service account token from `annal token create`.",
        },
        sessionCookie: {
          type: "apiKey",
          in: "cookie",
          name: SESSION_COOKIE,
          description:
            "A person's session, set by signing in at `/auth/login`; the person's access functions apply.",
        },
      },
      parameters: parameterComponents(input.limits),
      headers: {
        PreferenceApplied: {
          description: "The handling applied, when `Prefer` stated one.",
          schema: { type: "string" },
        },
        IgnoredParameters: {
          description:
            "Lenient handling: the query parameters this route does not take, ignored (each percent-encoded, comma-separated: `filtr`). `Prefer: handling=strict` refuses them instead.",
          schema: { type: "string" },
          example: "filtr",
        },
        UnknownAttributes: {
          description:
            "Lenient handling: attribute names no entry type has, in `filter`, `fields`, `sort` or `affects` (each percent-encoded, comma-separated). They hold no value: a filter on one matches nothing, so an empty page does not mean no entry has the attribute you meant. `Prefer: handling=strict` refuses them instead (`ANNAL_ATTRIBUTES_UNKNOWN`).",
          schema: { type: "string" },
          example: "titel",
        },
        NoStore: { description: "`no-store`", schema: { type: "string" } },
        Revalidate: {
          description: "`private, max-age=0, must-revalidate`",
          schema: { type: "string" },
        },
        ETag: {
          description:
            "A weak ETag of the representation (it changes with `at` and `fields` when the body does).",
          schema: { type: "string" },
        },
        LastModified: {
          description: "When the entry (as shown) last changed.",
          schema: { type: "string" },
        },
        ContentDisposition: {
          description: "Export mode: `attachment` with the file name.",
          schema: { type: "string" },
        },
        WWWAuthenticate: {
          description: '`Bearer realm="annal"` (RFC 6750).',
          schema: { type: "string" },
        },
        RetryAfter: { description: "Seconds to wait.", schema: { type: "integer" } },
      },
      responses: problemResponses(),
      schemas: { ...commonSchemas(), ...auditSchemas(), ...typeSchemas },
    },
  };
}
