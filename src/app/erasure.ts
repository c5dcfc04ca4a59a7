import { eraseEntry, ErasureEntryUnknownError, type Erasure } from "../audit/index.ts";
import type { FastifyInstance } from "fastify";
import type { Authentication } from "../auth/index.ts";
import type { AnnalConfig } from "../config/index.ts";
import { AnnalError } from "../errors/index.ts";
import type { Pool } from "../db/index.ts";
import { ENTRY_EVENT_TYPES } from "../events/index.ts";
import { entryUUIDForDn, UUID } from "../history/index.ts";
import { allProjections, replayProjection } from "./projections.ts";

export interface EraseFromLogOptions {
  /** The entry: its id (entryUUID) or a DN it had. */
  readonly entry: string;
  readonly reason: string;
  readonly attributes?: readonly string[];
  readonly onProgress?: (phase: string, done: number, total: number) => void;
}

/**
 * Erases one entry's values (`eraseEntry`: the log, with an `EntryErased` event), then rebuilds
 * every projection that holds entries' values from the redacted log, so that the values are
 * gone from every table: each is rebuilt side by side and swapped in, and the old tables are
 * dropped.
 */
export async function eraseFromLog(
  config: AnnalConfig,
  pool: Pool,
  options: EraseFromLogOptions,
): Promise<Erasure> {
  const entryUUID = UUID.test(options.entry)
    ? options.entry.toLowerCase()
    : await entryUUIDForDn(pool, options.entry, "ever");
  if (!entryUUID) throw new ErasureEntryUnknownError(options.entry);
  const erasure = await eraseEntry(pool, {
    entryUUID,
    reason: options.reason,
    ...(options.attributes ? { attributes: options.attributes } : {}),
  });
  const entryTypes = new Set<string>(ENTRY_EVENT_TYPES);
  for (const projection of allProjections(config)) {
    if (!projection.handles.some((type) => entryTypes.has(type))) continue;
    await replayProjection({
      pool,
      projection,
      onProgress: (done, total) => options.onProgress?.(projection.name, done, total),
    });
  }
  return erasure;
}

/**
 * `POST /api/erasures` with `{ "entry": "<id or DN>", "reason": "…", "attributes": [...] }`:
 * an erasure (`eraseFromLog`) for operators (the `operator` access function), answered 201
 * with what was erased. Errors are the server's problem details.
 */
export function erasureRoutes(options: {
  readonly config: AnnalConfig;
  readonly pool: Pool;
  readonly authentication: Authentication;
}) {
  const guard = options.authentication.require("operator");
  return async (scope: FastifyInstance): Promise<void> => {
    scope.addHook("onRequest", guard);
    scope.post("/api/erasures", async (request, reply) => {
      const body = (request.body ?? {}) as Record<string, unknown>;
      const { entry, reason, attributes } = body;
      const names =
        Array.isArray(attributes) && attributes.every((name) => typeof name === "string")
          ? (attributes as string[])
          : undefined;
      if (typeof entry !== "string" || entry === "" || (attributes !== undefined && !names)) {
        throw new AnnalError(
          "ANNAL_BAD_REQUEST",
          "an erasure takes { entry: <id or DN>, reason: <text>, attributes?: [<name>, …] }",
          {
            status: 400,
            details: { parameter: typeof entry === "string" ? "attributes" : "entry" },
          },
        );
      }
      const erasure = await eraseFromLog(options.config, options.pool, {
        entry,
        reason: typeof reason === "string" ? reason : "",
        ...(names ? { attributes: names } : {}),
      });
      return reply.code(201).send(erasure);
    });
  };
}
