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
    "/api/keys": {
      get: {
        operationId: "getSigningKeys",
        summary: "The public keys that check signed exports",
        description:
          'A JWK set (RFC 7517) of Ed25519 keys (RFC 8037). An export asked for with `export={"sign":true}` carries the `Annal-Signature` trailer, signed by the key its statement names (`kid`); `annal verify-export <file> <signature> --keys <this URL>` checks it offline, as do `openssl` and `sha256sum` (the format: docs/signed-exports.md).',
        tags: ["audit"],
        security: [],
        responses: {
          "200": {
            description: "The public keys.",
            content: {
              "application/jwk-set+json": { schema: { $ref: "#/components/schemas/JwkSet" } },
            },
          },
          ...problems("414", "431"),
        },
      },
    },
  };
}

export function auditSchemas(): Record<string, Json> {
  return {
    JwkSet: {
      type: "object",
      required: ["keys"],
      properties: {
        keys: {
          type: "array",
          items: {
            type: "object",
            required: ["kty", "crv", "x", "kid"],
            properties: {
              kty: { const: "OKP" },
              crv: { const: "Ed25519" },
              x: { type: "string", description: "The public key, base64url." },
              kid: { type: "string", description: "Its RFC 7638 thumbprint." },
              alg: { const: "EdDSA" },
              use: { const: "sig" },
            },
          },
        },
      },
    },
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
