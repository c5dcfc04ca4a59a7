type Json = Record<string, unknown>;

const problems = (...statuses: string[]): Json =>
  Object.fromEntries(
    statuses.map((status) => [status, { $ref: `#/components/responses/Problem${status}` }]),
  );

/** The tamper-evident log's and the export signatures' paths. */
export function auditPaths(): Json {
  return {
    "/api/log/head": {
      get: {
        operationId: "getLogHead",
        summary: "The head of the log's hash chain",
        description:
          "The last event chained, its hash and when it was chained: pin it, and `annal log verify` later shows whether the chain still leads to it. The chain follows the log within a second or so; before anything is chained, position 0 and 64 zeros.",
        tags: ["audit"],
        responses: {
          "200": {
            description: "The chain's head.",
            headers: { "Cache-Control": { $ref: "#/components/headers/NoStore" } },
            content: {
              "application/json": { schema: { $ref: "#/components/schemas/LogHead" } },
            },
          },
          ...problems("401", "403", "406", "414", "431", "503"),
        },
      },
    },
  };
}

export function auditSchemas(): Record<string, Json> {
  return {
    LogHead: {
      type: "object",
      additionalProperties: false,
      required: ["position", "hash", "time"],
      properties: {
        position: {
          type: "integer",
          minimum: 0,
          description: "The last chained event's position.",
        },
        hash: {
          type: "string",
          pattern: "^[0-9a-f]{64}$",
          description:
            "Its link: hex SHA-256 of the previous link and the SHA-256 of the event's stored content.",
        },
        time: {
          type: ["string", "null"],
          format: "date-time",
          description: "When it was chained.",
        },
      },
    },
  };
}
