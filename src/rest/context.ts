import type { FastifyReply } from "fastify";
import type { Authentication } from "../auth/index.ts";
import type { AnnalConfig } from "../config/index.ts";
import type { SigningKey } from "../audit/index.ts";
import type { Pool } from "../db/index.ts";
import type { FilterNode } from "../filters/index.ts";
import { filterAsStored, type DirectorySchema } from "../directory/index.ts";
import {
  ABSOLUTE_TRUE,
  checkAttributes,
  holdsNul,
  NUL_HINT,
  parseFilter,
} from "../filters/index.ts";
import type { Logger } from "../logger.ts";
import type { AttributeCatalog } from "./catalog.ts";
import type { CursorCodec } from "./cursor.ts";
import { RestError } from "./errors.ts";
import type { ExportGate } from "./export/gate.ts";
import type { Preferences } from "./prefer.ts";
import type { Clock } from "./time.ts";
import type { TypeNames } from "./type-names.ts";

/** What `restPlugin` needs from the application. */
export interface RestDeps {
  readonly pool: Pool;
  /** The event store's epoch (`store.epoch`): cursors name the database they belong to. */
  readonly epoch: string;
  /**
   * The directory's schema (`loadDirectorySchema`), for canonical attribute names, single-
   * valued attributes and JSON types. Without it attributes are described generically and
   * known by the names found on the entries.
   */
  readonly schema: DirectorySchema | undefined;
  readonly config: AnnalConfig;
  readonly log: Logger;
  /** Who may read: every route needs `read`, exports `export` too. */
  readonly authentication: Authentication;
  /** The clock; tests pass a fixed one. Default `() => new Date()`. */
  readonly now?: () => Date;
  /**
   * Further paths for the OpenAPI description, asked for each time it is served: the rules
   * file's custom endpoints under `/api` (`endpointsPlugin(...).openApiPaths`).
   */
  readonly customPaths?: () => Record<string, Record<string, unknown>>;
  /**
   * Capture records this directory (annal started with `[directory]`): until its first import
   * is in a projection (`holdsDirectory`), an entry the projection lacks may be one not
   * imported yet, answered `ANNAL_HISTORY_BUILDING` (503, `Retry-After`), not "unknown".
   * Default false: the projections are taken as they are.
   */
  readonly captured?: boolean;
}

/** One configured entry type as the channel serves it. */
export interface ServedType {
  readonly names: TypeNames;
  readonly base: string;
  readonly filter: string;
  /** `[[directory.types]] sortPairs`: the sorts read from an index of both values. */
  readonly sortPairs?: readonly (readonly [string, string])[];
}

/** Everything the routes share, built once when the plugin registers. */
export interface RestContext {
  readonly pool: Pool;
  readonly config: AnnalConfig["rest"];
  readonly schema: DirectorySchema | undefined;
  readonly log: Logger;
  readonly codec: CursorCodec;
  readonly catalog: () => Promise<AttributeCatalog>;
  /** Served types by REST path segment (`users`). */
  readonly types: ReadonlyMap<string, ServedType>;
  /** Redacted attribute names (configured spelling): known for `affects`, never served. */
  readonly redacted: readonly string[];
  readonly exports: ExportGate;
  /** See `RestDeps.customPaths`. */
  readonly customPaths: () => Record<string, Record<string, unknown>>;
  /**
   * Whether `projection` (`entries`, `entry_versions`) holds the whole directory: false while
   * capture's first import (or its projection) is under way. See `RestDeps.captured`.
   */
  holdsDirectory(projection: "entries" | "entry_versions"): Promise<boolean>;
  clock(): Clock;
  /** The key that signs exports, loaded (or generated) on first use. */
  signingKey(): Promise<SigningKey>;
}

/** The served type at a path segment; 404 `ANNAL_TYPE_UNKNOWN` naming the ones there are. */
export function servedType(context: RestContext, segment: string): ServedType {
  const type = context.types.get(segment);
  if (type) return type;
  const paths = [...context.types.keys()].map((path) => `/api/entries/${path}`);
  const singular = [...context.types.values()].find(
    (candidate) => candidate.names.name.toLowerCase() === segment.toLowerCase(),
  );
  throw new RestError("ANNAL_TYPE_UNKNOWN", `there is no entry type at /api/entries/${segment}`, {
    status: 404,
    hint: singular
      ? `the path of type "${singular.names.name}" is /api/entries/${singular.names.path}`
      : paths.length > 0
        ? `the entry types are at ${paths.join(", ")}`
        : "no entry types are configured: add [[directory.types]] to the configuration",
    details: { entryType: segment },
  });
}

/** The `filter` parameter parsed and checked: the AST to compile and the unknown names. */
export function readFilter(
  text: string | undefined,
  catalog: AttributeCatalog,
): { ast: FilterNode; unknown: string[] } {
  if (text === undefined) return { ast: ABSOLUTE_TRUE, unknown: [] };
  const { ast } = parseFilter(text);
  if (holdsNul(ast)) {
    throw new RestError("ANNAL_PARAMETER_INVALID", "filter: a value holds the character U+0000", {
      hint: NUL_HINT,
      details: { parameter: "filter" },
    });
  }
  const checked = checkAttributes(ast, (name) => catalog.resolve(name)?.name);
  // `objectSid=S-1-5-21-…` compares with the bytes the log keeps, as AD itself reads it.
  return { ...checked, ast: filterAsStored(checked.ast, (name) => catalog.resolve(name)?.shown) };
}

/** Answers `Preference-Applied` when the request stated a handling preference. */
export function applyPreferences(reply: FastifyReply, preferences: Preferences): void {
  if (preferences.stated) reply.header("preference-applied", `handling=${preferences.handling}`);
}

/** `include`: comma-separated parts of the response, each one of `allowed`. */
export function readInclude<const T extends string>(
  value: string | undefined,
  allowed: readonly T[],
  defaults: readonly T[],
): Set<T> {
  if (value === undefined) return new Set(defaults);
  const parts = value
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
  const wrong = parts.filter((part) => !(allowed as readonly string[]).includes(part));
  if (wrong.length > 0) {
    throw new RestError(
      "ANNAL_PARAMETER_INVALID",
      `include: ${wrong.map((part) => JSON.stringify(part)).join(", ")} ${wrong.length === 1 ? "is" : "are"} not a part of the response`,
      {
        hint: `include takes a comma-separated list of ${allowed.join(", ")}`,
        details: { parameter: "include", expected: allowed },
      },
    );
  }
  return new Set(parts as T[]);
}
