import type { FastifyInstance, FastifyReply } from "fastify";
import { BUILT_IN_REDACTED_ATTRIBUTES } from "../config/index.ts";
import { catalogSource } from "./catalog.ts";
import { holdsDirectory } from "../history/index.ts";
import type { RestContext, RestDeps, ServedType } from "./context.ts";
import { CursorCodec, loadCursorKey } from "./cursor.ts";
import { RestError } from "./errors.ts";
import { ExportGate } from "./export/gate.ts";
import { sendProblem } from "../http/index.ts";
import { answerChanges } from "./routes/changes.ts";
import { answerExtract } from "./routes/extracts.ts";
import { answerLogHead, answerPublicKeys } from "./routes/audit.ts";
import { loadSigningKey, publishSigningKey, type SigningKey } from "../audit/index.ts";
import { docsRoutes } from "./routes/docs.ts";
import { entryChanges, lookupEntry } from "./routes/entry.ts";
import { entryMemberships } from "./routes/memberships.ts";
import { requireAcceptable } from "./negotiate.ts";
import { searchEntries } from "./routes/search.ts";
import { checkTypeNames } from "./type-names.ts";

/**
 * The path after `/api/entries/<type>/`, split into its segments, each percent-decoded on
 * its own, so that a DN's encoded `/` (`%2F`) stays inside its segment.
 */
function entrySegments(url: string): string[] {
  const segments = (url.split("?")[0] ?? "").split("/");
  const at = segments.findIndex((segment, i) => segment === "entries" && segments[i - 1] === "api");
  return segments.slice(at + 2).map((segment) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      throw new RestError("ANNAL_ID_INVALID", "the ID is not valid percent-encoding", {
        hint: "URL-encode the DN: encodeURIComponent in JavaScript, urllib.parse.quote(dn, safe='') in Python",
        details: { parameter: "id" },
      });
    }
  });
}

function notFound(url: string): RestError {
  return new RestError("ANNAL_NOT_FOUND", `no route for GET ${url.split("?")[0]}`, {
    status: 404,
    hint: "entries are at /api/entries/{type}/{id}, /api/entries/{type}/{id}/changes and /api/entries/{type}/{id}/memberships; URL-encode a DN used as {id}, its / as %2F",
  });
}

/**
 * The directory REST channel as a Fastify plugin: `/api` (documentation, or the OpenAPI
 * description by content negotiation), `/api.json`, `/api.yaml`, and under `/api/entries` and
 * `/api/changes` the entries and their history, read from the projections.
 *
 * Register it on the root instance with no prefix (its paths are absolute). Registration
 * checks the type names (`checkTypeNames`) and fails on a collision, so `server.ready()` or
 * `listen()` rejects before any traffic; with `[rest] enabled = false` it then adds nothing. The data routes need a bearer token with the `read`
 * access function (`export` too for exports); the description and the documentation are public.
 *
 * @example
 * await server.register(restPlugin({ pool, epoch: store.epoch, schema, config, log, authentication }));
 */
export function restPlugin(deps: RestDeps) {
  return async function rest(server: FastifyInstance): Promise<void> {
    const { config, pool } = deps;
    const directoryTypes = config.directory?.types ?? [];
    const names = checkTypeNames(directoryTypes);
    if (!config.rest.enabled) return;
    const types = new Map<string, ServedType>(
      directoryTypes.map((type, index) => [
        names[index]!.path,
        {
          names: names[index]!,
          base: type.base,
          filter: type.filter,
          sortPairs: (type.sortPairs ?? []).map(([a, b]) => [a!, b!] as const),
        },
      ]),
    );
    const redacted = config.directory?.capture.redact ?? [...BUILT_IN_REDACTED_ATTRIBUTES];
    const now = deps.now ?? (() => new Date());
    let signingKey: Promise<SigningKey> | undefined;
    const context: RestContext = {
      pool,
      config: config.rest,
      schema: deps.schema,
      log: deps.log,
      codec: new CursorCodec(deps.epoch, await loadCursorKey(pool)),
      catalog: catalogSource(pool, deps.schema, redacted),
      types,
      redacted,
      exports: new ExportGate(config.rest.export.maxConcurrent),
      customPaths: deps.customPaths ?? (() => ({})),
      holdsDirectory: async (projection) =>
        deps.captured !== true || (await holdsDirectory(pool, projection)),
      clock: () => ({ now: now(), timeZone: config.rest.timeZone }),
      signingKey: () =>
        (signingKey ??= loadSigningKey({
          pem: config.audit.signingKey,
          dataDir: config.database.dataDir,
        })
          .then(async (key) => {
            await publishSigningKey(pool, key);
            return key;
          })
          .catch((error: unknown) => {
            signingKey = undefined;
            throw error;
          })),
    };

    server.setErrorHandler((error, request, reply) => sendProblem(error, request, reply));
    await server.register(docsRoutes(context));
    // The public keys are public, like an OpenID provider's: a signed export is checked with
    // them by whoever holds it.
    await server.register(async (keys) => {
      keys.get("/api/keys", (_request, reply) => answerPublicKeys(context, reply));
    });
    // The extracts answer Parquet, not JSON: outside the data routes' Accept check.
    await server.register(async (extracts) => {
      extracts.addHook("onRequest", deps.authentication.require("read"));
      extracts.get<{ Params: { file: string } }>("/api/extracts/:file", (request, reply) =>
        answerExtract(context, request, reply, request.params.file),
      );
    });
    await server.register(async (data) => {
      data.addHook("onRequest", deps.authentication.require("read"));
      data.addHook("preHandler", requireAcceptable);
      data.get("/api/changes", (request, reply) => answerChanges(context, request, reply));
      data.get("/api/log/head", (_request, reply) => answerLogHead(context, reply));
      data.get<{ Params: { type: string } }>("/api/entries/:type", (request, reply) =>
        searchEntries(context, request, reply),
      );
      data.get<{ Params: { type: string } }>(
        "/api/entries/:type/*",
        (request, reply: FastifyReply) => {
          const segments = entrySegments(request.url);
          const [id, part] = segments;
          if (segments.length === 1 && id) {
            return lookupEntry(context, request, reply, request.params.type, id);
          }
          if (segments.length === 2 && id && part === "changes") {
            return entryChanges(context, request, reply, request.params.type, id);
          }
          if (segments.length === 2 && id && part === "memberships") {
            return entryMemberships(context, request, reply, request.params.type, id);
          }
          throw notFound(request.url);
        },
      );
    });
  };
}
