import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { sampleLdif } from "../../src/demo/index.ts";
import { createToken } from "../../src/auth/index.ts";
import { parseConfig, type AnnalConfig } from "../../src/config/index.ts";
import {
  createDirectoryClient,
  type DirectoryClient,
  type DirectoryEntry,
  type DirectoryTlsOptions,
  type IdentitySetting,
} from "../../src/directory/index.ts";
import { type FilterNode } from "../../src/filters/index.ts";
import { buildGateway, graphqlPlugin, type DirectoryWrite } from "../../src/graphql/index.ts";
import type { GraphQLSchema } from "graphql";
import { createLogger } from "../../src/logger.ts";
import { EventStore } from "../../src/store/index.ts";
import { testDatabase } from "./postgres.ts";
import { startSlapd, type Slapd } from "./slapd.ts";
import { createAuthentication } from "../../src/auth/index.ts";

export const REPO = resolve(import.meta.dirname, "../..");
export const PEOPLE = "ou=people,dc=example,dc=org";
export const GROUPS = "ou=groups,dc=example,dc=org";

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** LDAP requests made through the counting client. */
export interface RoundTrips {
  searches: number;
  /** Searches made without the paged-results control (`paged: false`). */
  unpaged: number;
  /** Pages read: one request and answer each. */
  pages: number;
  gets: number;
  writes: number;
  /** The filter of every search, as the directory client got it. */
  readonly filters: FilterNode[];
  /** The attributes every search and read asked for, and which of them as bytes. */
  readonly reads: { attributes: readonly string[]; binaryAttributes: readonly string[] }[];
  /** Every entry the searches brought back, as the directory sent it. */
  readonly found: DirectoryEntry[];
  readonly total: number;
  reset(): void;
}

function readOf(
  options: { attributes?: readonly string[]; binaryAttributes?: readonly string[] } = {},
) {
  return {
    attributes: [...(options.attributes ?? [])],
    binaryAttributes: [...(options.binaryAttributes ?? [])],
  };
}

/** A directory client that counts its round trips. */
export function countingClient(directory: DirectoryClient): {
  client: DirectoryClient;
  trips: RoundTrips;
} {
  const trips: RoundTrips = {
    searches: 0,
    unpaged: 0,
    pages: 0,
    gets: 0,
    writes: 0,
    filters: [],
    reads: [],
    found: [],
    get total() {
      return this.pages + this.gets + this.writes;
    },
    reset() {
      this.searches = this.unpaged = this.pages = this.gets = this.writes = 0;
      this.filters.length = 0;
      this.reads.length = 0;
      this.found.length = 0;
    },
  };
  const writes = new Set<PropertyKey>(["add", "modify", "modifyDN", "delete"]);
  const client = new Proxy(directory, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      if (property === "search") {
        return async function* (...args: Parameters<DirectoryClient["search"]>) {
          trips.searches++;
          if (args[1]?.paged === false) trips.unpaged++;
          if (args[1]?.filter !== undefined) trips.filters.push(args[1].filter);
          trips.reads.push(readOf(args[1]));
          for await (const page of target.search(...args)) {
            trips.pages++;
            trips.found.push(...page);
            yield page;
          }
        };
      }
      return (...args: unknown[]) => {
        if (property === "get") {
          trips.gets++;
          trips.reads.push(readOf(args[1] as Parameters<DirectoryClient["get"]>[1]));
        } else if (writes.has(property)) trips.writes++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { client, trips };
}

/** A directory server other than the private slapd: 389, Samba's AD DC. */
export interface GatewayServer {
  readonly url: string;
  readonly bindDN: string;
  readonly password: string;
  readonly base: string;
  /** `[directory.tls]`: the CA file and the name to check (Samba's DC over ldaps://). */
  readonly tls?: Pick<DirectoryTlsOptions, "caFile" | "serverName">;
  /** `[directory] identity` (default `auto`). */
  readonly identity?: IdentitySetting;
}

export interface GatewayHarness {
  readonly server: FastifyInstance;
  readonly slapd: Slapd | undefined;
  readonly directory: DirectoryClient | undefined;
  readonly trips: RoundTrips;
  readonly config: AnnalConfig;
  readonly schema: GraphQLSchema;
  readonly tokens: { readonly read: string; readonly write: string; readonly both: string };
  readonly writes: DirectoryWrite[];
  query(
    source: string,
    variables?: Record<string, unknown>,
    options?: { token?: string | null; headers?: Record<string, string>; method?: "GET" | "POST" },
  ): Promise<{ status: number; body: GraphqlBody }>;
}

export interface GraphqlBody {
  data?: Record<string, unknown> | null;
  errors?: { message: string; path?: (string | number)[]; extensions: Record<string, unknown> }[];
}

/** The demo's `[graphql]`, `[[graphql.rest]]` and `[i18n]` sections, as the demo config has them. */
export async function demoGatewayToml(): Promise<string> {
  const demo = await readFile(resolve(REPO, "ops/demo/annal.toml"), "utf8");
  return demo.slice(demo.indexOf("[graphql]"));
}

/**
 * The gateway over a private slapd holding the demo organisation (`seedLdif` to change it),
 * with the demo's gateway schema and configuration unless `toml` gives others, a database of
 * its own, and tokens for a reader, a writer and an account with both.
 */
export async function startGateway(
  t: Teardown,
  options: {
    toml?: string;
    seedLdif?: string;
    directory?: boolean;
    slapd?: Slapd;
    /** Another server than a slapd: the gateway reads it instead (no seed is loaded). */
    server?: GatewayServer;
    afterWrite?: (write: DirectoryWrite) => Promise<void>;
    beforeWrite?: (write: DirectoryWrite) => Promise<void>;
  } = {},
): Promise<GatewayHarness> {
  const withDirectory = (options.directory ?? true) && options.server === undefined;
  const slapd = withDirectory
    ? (options.slapd ?? (await startSlapd({ seedLdif: options.seedLdif ?? sampleLdif() })))
    : undefined;
  if (slapd !== undefined && options.slapd === undefined) t.teardown(() => slapd.stop());
  const reached: GatewayServer | undefined =
    options.server ?? (slapd && { ...slapd, base: "dc=example,dc=org" });
  const directoryToml = reached === undefined ? "" : gatewayDirectoryToml(reached);
  const config = parseConfig(
    `[log]\nlevel = "silent"\n\n${directoryToml}${options.toml ?? (await demoGatewayToml())}`,
    {
      // Beside the demo configuration, whose [graphql] part these tests use: its relative
      // paths resolve from there.
      path: join(REPO, "ops/demo/test.toml"),
      env: { LDAP_PASSWORD: reached?.password ?? "" },
      cwd: REPO,
    },
  );
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const tokens = {
    read: (await createToken(pool, store, { name: "reader", access: ["read"] })).token,
    write: (await createToken(pool, store, { name: "writer", access: ["write"] })).token,
    both: (await createToken(pool, store, { name: "editor", access: ["read", "write"] })).token,
  };
  let directory: DirectoryClient | undefined;
  let trips: RoundTrips = countingClient(
    createDirectoryClient({ url: "ldap://127.0.0.1:1", bindDN: "", password: "" }),
  ).trips;
  if (reached !== undefined) {
    const real = createDirectoryClient({
      url: reached.url,
      bindDN: reached.bindDN,
      password: reached.password,
      poolSize: 4,
      ...(reached.tls ? { tls: reached.tls } : {}),
    });
    t.teardown(() => real.close());
    const counted = countingClient(real);
    directory = counted.client;
    trips = counted.trips;
  }
  const writes: DirectoryWrite[] = [];
  const log = createLogger("silent");
  const built = await buildGateway(config);
  const server = Fastify({ loggerInstance: log as FastifyBaseLogger });
  await server.register(
    graphqlPlugin({
      pool,
      authentication: createAuthentication({ pool }),
      directory,
      config,
      log,
      gateway: built,
      beforeWrite: options.beforeWrite,
      afterWrite: async (write) => {
        writes.push(write);
        await options.afterWrite?.(write);
      },
    }),
  );
  await server.ready();
  t.teardown(() => server.close());
  return {
    server,
    slapd,
    directory,
    trips,
    config,
    schema: built.schema,
    tokens,
    writes,
    async query(source, variables, queryOptions = {}) {
      const token = queryOptions.token === undefined ? tokens.both : queryOptions.token;
      const headers: Record<string, string> = { ...queryOptions.headers };
      if (token !== null) headers.authorization = `Bearer ${token}`;
      const method = queryOptions.method ?? "POST";
      const response =
        method === "POST"
          ? await server.inject({
              method,
              url: "/graphql",
              headers,
              payload: { query: source, variables },
            })
          : await server.inject({
              method,
              url: "/graphql",
              headers,
              query: {
                query: source,
                ...(variables ? { variables: JSON.stringify(variables) } : {}),
              },
            });
      return { status: response.statusCode, body: response.json<GraphqlBody>() };
    },
  };
}

/** `[directory]` (and `[directory.tls]`) for `server`, its password from `LDAP_PASSWORD`. */
function gatewayDirectoryToml(server: GatewayServer): string {
  const lines = [
    "[directory]",
    `url = "${server.url}"`,
    `bindDN = "${server.bindDN}"`,
    'password = "${LDAP_PASSWORD}"',
    `base = "${server.base}"`,
    ...(server.identity ? [`identity = "${server.identity}"`] : []),
  ];
  if (server.tls) {
    lines.push("", "[directory.tls]");
    if (server.tls.caFile) lines.push(`caFile = "${server.tls.caFile}"`);
    if (server.tls.serverName) lines.push(`serverName = "${server.tls.serverName}"`);
  }
  return `${lines.join("\n")}\n\n`;
}
