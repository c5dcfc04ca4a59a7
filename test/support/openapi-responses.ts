import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** One real response, as read off the wire. */
export interface SeenResponse {
  readonly method: string;
  /** The request's path, without the query. */
  readonly path: string;
  readonly status: number;
  readonly contentType: string | undefined;
  readonly body: string;
}

const DOCUMENT_ID = "https://annal.invalid/openapi.json";

/** Every `$ref: "#/..."` made absolute, so that a schema taken out of the document resolves. */
function absoluteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(absoluteRefs);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, member]) => [
      key,
      key === "$ref" && typeof member === "string" && member.startsWith("#")
        ? `${DOCUMENT_ID}${member}`
        : absoluteRefs(member),
    ]),
  );
}

/**
 * Checks real responses against an OpenAPI 3.1 document with Ajv (JSON Schema 2020-12, with
 * ajv-formats): the operation for the path and method, the response for the status (or its
 * `4XX` range, or `default`), the media type among its content, and the body against that
 * media type's schema. Each departure is a sentence naming what was not as documented.
 */
export class OpenApiResponses {
  readonly #document: Json;
  readonly #ajv: Ajv2020;
  readonly #compiled = new Map<object, ValidateFunction>();
  readonly #paths: { template: string; pattern: RegExp; literal: number }[];

  constructor(document: Json) {
    this.#document = absoluteRefs(document) as Json;
    this.#ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats.default(this.#ajv);
    this.#ajv.addSchema({ ...this.#document, $id: DOCUMENT_ID });
    // A literal path wins over a template that also matches it (`/api/entries/{id}`).
    this.#paths = Object.keys(document.paths)
      .map((template) => ({
        template,
        pattern: new RegExp(
          `^${template
            .split(/\{[^}]+\}/)
            .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))
            .join("[^/]+")}$`,
        ),
        literal: template.replace(/\{[^}]+\}/g, "").length,
      }))
      .sort((a, b) => b.literal - a.literal);
  }

  #resolve(item: Json | undefined): Json | undefined {
    if (item?.$ref === undefined) return item;
    const pointer = String(item.$ref).slice(`${DOCUMENT_ID}#/`.length).split("/");
    let node: Json = this.#document;
    for (const part of pointer) node = node[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    return this.#resolve(node);
  }

  /** What in `response` departs from the document; empty when it is as documented. */
  departures(response: SeenResponse): string[] {
    const where = `${response.method} ${response.path} → ${response.status}`;
    const path = this.#paths.find((p) => p.pattern.test(response.path));
    const operation = path && this.#document.paths[path.template][response.method.toLowerCase()];
    const status = String(response.status);
    // A path (or method) the document has not is answered 404 (405): its problem response.
    const described = this.#resolve(
      operation
        ? (operation.responses[status] ??
            operation.responses[`${status[0]}XX`] ??
            operation.responses.default)
        : this.#document.components.responses[`Problem${status}`],
    );
    if (!operation && (!described || status !== "404")) {
      return [`${where}: the path is not in the document`];
    }
    if (!described) return [`${where}: the status is not documented for ${path!.template}`];
    const content = described.content as Record<string, Json> | undefined;
    if (content === undefined) {
      return response.body === "" || response.status < 300 || response.status === 304
        ? []
        : [`${where}: a body the document does not describe`];
    }
    const mediaType = response.contentType?.split(";")[0]?.trim().toLowerCase();
    if (mediaType === undefined) return [`${where}: no Content-Type`];
    const media = content[mediaType];
    if (!media) {
      return [`${where}: ${mediaType} is not among ${Object.keys(content).join(", ")}`];
    }
    if (media.schema === undefined) return [];
    let body: unknown = response.body;
    if (mediaType === "application/json" || mediaType.endsWith("+json")) {
      try {
        body = JSON.parse(response.body);
      } catch {
        return [`${where}: the ${mediaType} body is not JSON`];
      }
    }
    let validate = this.#compiled.get(media.schema);
    if (!validate) {
      validate = this.#ajv.compile(media.schema);
      this.#compiled.set(media.schema, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map(
      (error) => `${where}: ${error.instancePath || "(body)"} ${error.message ?? "is invalid"}`,
    );
  }
}
