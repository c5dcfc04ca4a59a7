import { createReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import Negotiator from "negotiator";
import { stringify } from "yaml";
import type { RestContext } from "../context.ts";
import { RestError } from "../errors.ts";
import { openApiDocument } from "../openapi/document.ts";
import { PACKAGE_ROOT } from "../../package-root.ts";

const SWAGGER_UI = path.dirname(
  createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"),
);

/** The documentation's files, served from the swagger-ui-dist package (no CDN). */
const ASSETS: Readonly<Record<string, string>> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>annal · directory REST channel</title>
<link rel="icon" type="image/png" href="/api/_docs/favicon-32x32.png">
<link rel="stylesheet" href="/api/_docs/swagger-ui.css">
</head>
<body>
<div id="docs"></div>
<script src="/api/_docs/swagger-ui-bundle.js"></script>
<script src="/api/_docs/init.js"></script>
</body>
</html>
`;

// A file rather than an inline script, so the page works under a strict Content-Security-Policy.
const INIT = `window.ui = SwaggerUIBundle({
  url: "/api.json",
  dom_id: "#docs",
  deepLinking: true,
  persistAuthorization: true,
  displayRequestDuration: true,
  tryItOutEnabled: true,
});
`;

const CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

/** The description with the rules file's paths (and their tag) added, when it has any. */
function withCustomPaths(
  document: Record<string, unknown>,
  custom: Record<string, Record<string, unknown>>,
): Record<string, unknown> {
  if (Object.keys(custom).length === 0) return document;
  return {
    ...document,
    tags: [
      ...(document.tags as unknown[]),
      { name: "custom", description: "The rules file's custom endpoints" },
    ],
    paths: { ...(document.paths as Record<string, unknown>), ...custom },
  };
}

const MEDIA_TYPES = [
  "application/json",
  "application/yaml",
  "text/html",
  "application/x-yaml",
  "text/yaml",
];

/**
 * `/api` (documentation for browsers, the description otherwise, by `Accept`), `/api.json`,
 * `/api.yaml` and the documentation's files under `/api/_docs/`. Public: they describe the
 * channel, not the directory's data.
 */
export function docsRoutes(context: RestContext) {
  let cached: { json: Record<string, unknown>; at: number } | undefined;
  const description = async () => {
    // Rebuilt at most once a minute: without a schema, attributes come from the entries.
    if (!cached || Date.now() - cached.at > 60_000) {
      const manifest = JSON.parse(
        await readFile(path.join(PACKAGE_ROOT, "package.json"), "utf8"),
      ) as { version: string };
      const json = openApiDocument({
        version: manifest.version,
        types: [...context.types.values()],
        catalog: await context.catalog(),
        schema: context.schema,
        limits: context.config,
      });
      cached = { json, at: Date.now() };
    }
    // The rules file's routes as they are now (development mode swaps them).
    return withCustomPaths(cached.json, context.customPaths());
  };
  const sendJson = async (reply: FastifyReply) =>
    reply
      .type("application/json; charset=utf-8")
      .send(JSON.stringify(await description(), null, 2));
  const sendYaml = async (reply: FastifyReply) =>
    reply.type("application/yaml; charset=utf-8").send(stringify(await description()));

  return async (server: FastifyInstance) => {
    server.get("/api", async (request: FastifyRequest, reply) => {
      reply.header("vary", "Accept");
      const chosen = new Negotiator(request).mediaType(MEDIA_TYPES);
      if (chosen === "text/html") {
        return reply
          .type("text/html; charset=utf-8")
          .header("content-security-policy", CSP)
          .send(PAGE);
      }
      if (chosen === "application/json") return sendJson(reply);
      if (chosen !== undefined) return sendYaml(reply);
      throw new RestError(
        "ANNAL_NOT_ACCEPTABLE",
        "/api answers in text/html, application/json or application/yaml",
        {
          status: 406,
          hint: "send Accept: application/json (or fetch /api.json, /api.yaml)",
        },
      );
    });
    server.get("/api.json", (_request, reply) => sendJson(reply));
    server.get("/api.yaml", (_request, reply) => sendYaml(reply));
    server.get("/api/_docs/init.js", (_request, reply) =>
      reply.type("text/javascript; charset=utf-8").header("cache-control", "no-cache").send(INIT),
    );
    server.get<{ Params: { file: string } }>("/api/_docs/:file", (request, reply) => {
      const type = ASSETS[request.params.file];
      if (type === undefined) {
        throw new RestError("ANNAL_NOT_FOUND", "no such documentation file", { status: 404 });
      }
      return reply
        .type(type)
        .header("cache-control", "public, max-age=86400")
        .send(createReadStream(path.join(SWAGGER_UI, request.params.file)));
    });
  };
}
