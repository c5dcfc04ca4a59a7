import { toJsonSchema } from "@valibot/to-json-schema";
import type { GenericSchema } from "valibot";
import { describedInput } from "./validator.ts";

type Json = Record<string, unknown>;

/** A route as Hono lists it. */
export interface ListedRoute {
  readonly method: string;
  readonly path: string;
  readonly handler: unknown;
}

const METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch"]);
const problem = (status: string): Json => ({ $ref: `#/components/responses/Problem${status}` });

/** The JSON Schema of a validator's valibot schema (what JSON Schema cannot say is left out). */
function jsonSchema(schema: unknown): Json {
  const converted = toJsonSchema(schema as GenericSchema, {
    target: "draft-2020-12",
    errorMode: "ignore",
  }) as Json;
  delete converted.$schema;
  return converted;
}

/** `/api/departments/:ou/people.csv` → `/api/departments/{ou}/people.csv`, and its names. */
function templatePath(path: string): { path: string; names: string[] } {
  const names: string[] = [];
  const templated = path.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?\??/g, (_all, name: string) => {
    names.push(name);
    return `{${name}}`;
  });
  return { path: templated, names };
}

/** `post /api/access-requests` → `postAccessRequests`. */
function operationId(method: string, path: string): string {
  const words = path
    .replace(/^\/api\//, "")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return method + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
}

/** The members of an object schema as OpenAPI parameters `in` one place. */
function memberParameters(schema: Json, where: "query" | "header" | "path" | "cookie"): Json[] {
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, member]) => ({
    name,
    in: where,
    required: where === "path" || required.has(name),
    description:
      typeof member.description === "string"
        ? member.description
        : `Checked by the rules file's validator.`,
    schema: member,
  }));
}

/**
 * The rules file's routes as OpenAPI path items: each route's method and path, its path
 * parameters, and what its `vValidator`s check (query, headers, cookies, path parameters, a
 * JSON or form body), converted from their valibot schemas with `@valibot/to-json-schema`.
 * What a route answers is the rules file's to say: a 2XX of its own; the document adds the
 * problems annal answers for it (400 for input its validators refuse, 401 without
 * credentials unless the route is public). Routes with a wildcard are left out: OpenAPI has
 * no path for them.
 */
export function endpointPaths(
  routes: readonly ListedRoute[],
  options: { file: string; isPublic(method: string, path: string): boolean },
): Record<string, Json> {
  const byRoute = new Map<string, { method: string; path: string; handlers: unknown[] }>();
  for (const route of routes) {
    const method = route.method.toLowerCase();
    if (!METHODS.has(method) || route.path.includes("*")) continue;
    const key = `${method} ${route.path}`;
    const entry = byRoute.get(key) ?? { method, path: route.path, handlers: [] };
    entry.handlers.push(route.handler);
    byRoute.set(key, entry);
  }
  const paths: Record<string, Json> = {};
  for (const { method, path, handlers } of byRoute.values()) {
    const inputs = handlers.flatMap((handler) => describedInput(handler) ?? []);
    const schemaOf = (target: string) => {
      const input = inputs.find((one) => one.target === target);
      return input === undefined ? undefined : jsonSchema(input.schema);
    };
    const template = templatePath(path);
    const params = schemaOf("param");
    const parameters: Json[] = [
      ...template.names.map(
        (name) =>
          (params ? memberParameters(params, "path") : []).find((p) => p.name === name) ?? {
            name,
            in: "path",
            required: true,
            description: "A path parameter of the route.",
            schema: { type: "string" },
          },
      ),
      ...["query", "header", "cookie"].flatMap((target) => {
        const schema = schemaOf(target);
        return schema ? memberParameters(schema, target as "query" | "header" | "cookie") : [];
      }),
    ];
    const json = schemaOf("json");
    const form = schemaOf("form");
    const requestBody =
      json || form
        ? {
            required: true,
            content: {
              ...(json ? { "application/json": { schema: json } } : {}),
              ...(form
                ? {
                    "application/x-www-form-urlencoded": { schema: form },
                    "multipart/form-data": { schema: form },
                  }
                : {}),
            },
          }
        : undefined;
    const isPublic = options.isPublic(method.toUpperCase(), path);
    paths[template.path] ??= {};
    paths[template.path]![method] = {
      operationId: operationId(method, template.path),
      summary: `${method.toUpperCase()} ${template.path}`,
      description: `A custom endpoint of the rules file (${options.file}). What it answers is the rules file's to say; annal answers for it when its validators refuse the input${isPublic ? "" : " or the caller has no credentials"}.`,
      tags: ["custom"],
      ...(isPublic ? { security: [] } : {}),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses: {
        "2XX": { description: "The endpoint's answer, as the rules file writes it." },
        "400": problem("400"),
        ...(isPublic ? {} : { "401": problem("401") }),
        "414": problem("414"),
      },
    };
  }
  return paths;
}
