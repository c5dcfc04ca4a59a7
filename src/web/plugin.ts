import { readFileSync } from "node:fs";
import path from "node:path";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { UnauthenticatedError, type Authentication } from "../auth/index.ts";
import { buildWebAssets, type WebAsset } from "./assets.ts";
import { SHELL_CSP, shellPage } from "./shell.ts";
import { PACKAGE_ROOT } from "../package-root.ts";

/**
 * annal's icon (src/web/client/favicon.svg drawn at 16, 32 and 48 pixels, as PNGs in an ICO):
 * every page of annal's origin has it, signed in or not, as browsers ask for `/favicon.ico`.
 */
const FAVICON = path.join(PACKAGE_ROOT, "src", "web", "client", "favicon.ico");

export interface WebPluginOptions {
  /** The one authentication: `/app` is for signed-in people (or a bearer token's account). */
  readonly authentication: Authentication;
}

/**
 * The web application at `/app`: one shell page for every path under it (the client routes),
 * and its bundled assets under `/app/assets/`. A request without a session is sent to the
 * sign-in page, which brings the person back to the page they asked for. Everything the
 * application shows it reads from annal's public APIs (GraphQL, REST) with the session
 * cookie: this plugin serves files, never data.
 */
export function webPlugin(options: WebPluginOptions) {
  if (!options?.authentication) throw new TypeError("webPlugin needs the authentication");
  const { authentication } = options;
  // Built once, when first asked for: a process that never serves /app never bundles it.
  let assets: Promise<ReadonlyMap<string, WebAsset>> | undefined;
  const built = () => {
    assets ??= buildWebAssets().catch((error: unknown) => {
      assets = undefined;
      throw error;
    });
    return assets;
  };

  const shell = async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      await authentication.authenticate(request);
    } catch (error) {
      if (!(error instanceof UnauthenticatedError)) throw error;
      const returnTo = encodeURIComponent(request.url);
      return reply.redirect(`/auth/login?returnTo=${returnTo}`, 303);
    }
    const version = (await built()).get("app.js")!.etag.slice(1, 13);
    return reply
      .type("text/html; charset=utf-8")
      .header("content-security-policy", SHELL_CSP)
      .header("cache-control", "no-store")
      .header("x-content-type-options", "nosniff")
      .header("referrer-policy", "same-origin")
      .send(shellPage(version));
  };

  let icon: Buffer | undefined;
  return async (server: FastifyInstance): Promise<void> => {
    server.get("/favicon.ico", async (_request, reply) => {
      icon ??= readFileSync(FAVICON);
      return reply
        .type("image/x-icon")
        .header("cache-control", "public, max-age=86400")
        .header("x-content-type-options", "nosniff")
        .send(icon);
    });
    server.get("/app", shell);
    server.get("/app/*", (request, reply) => shell(request, reply));
    server.get<{ Params: { file: string } }>("/app/assets/:file", async (request, reply) => {
      const asset = (await built()).get(request.params.file);
      if (!asset) return reply.callNotFound();
      reply
        .type(asset.type)
        .header("etag", asset.etag)
        .header("cache-control", "public, max-age=0, must-revalidate")
        .header("x-content-type-options", "nosniff");
      if (request.headers["if-none-match"] === asset.etag) return reply.code(304).send();
      return reply.send(asset.body);
    });
  };
}
