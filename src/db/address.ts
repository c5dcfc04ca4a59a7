import { createRequire } from "node:module";

/**
 * pg's own reader of connection parameters (what a `pg.Client` connects to). Loaded by
 * `require`: @types/pg types it, but not under pg's `exports` map.
 */
const ConnectionParameters = createRequire(import.meta.url)(
  "pg/lib/connection-parameters.js",
) as new (config: { connectionString: string }) => { host?: string; port?: number };

/** How annal reaches its PostgreSQL: the server's Unix socket, or TCP. */
export interface DatabaseAddress {
  readonly transport: "unix-socket" | "tcp";
  /** The socket's path (`/run/postgresql/.s.PGSQL.5432`), or `host:port`. */
  readonly address: string;
}

/**
 * Where a connection to `url` goes, read with pg's own parser of connection parameters (the
 * URL, then `PGHOST`/`PGPORT` and pg's defaults), so that it says what pg does: a host that is
 * a directory (`postgresql:///annal?host=/run/postgresql`, `postgres://%2Frun%2Fpostgresql/annal`)
 * is the socket `<host>/.s.PGSQL.<port>` in it; any other host is TCP.
 *
 * @example
 * databaseAddress("postgres://annal@%2Frun%2Fpostgresql/annal");
 * // { transport: "unix-socket", address: "/run/postgresql/.s.PGSQL.5432" }
 */
export function databaseAddress(url: string): DatabaseAddress {
  const { host = "localhost", port = 5432 } = new ConnectionParameters({
    connectionString: url,
  } as never);
  return host.startsWith("/")
    ? { transport: "unix-socket", address: `${host.replace(/\/+$/, "")}/.s.PGSQL.${port}` }
    : { transport: "tcp", address: `${host.includes(":") ? `[${host}]` : host}:${port}` };
}

/** `over the Unix socket /run/postgresql/.s.PGSQL.5432`, `over TCP to db:5432`: for messages. */
export function describeAddress(address: DatabaseAddress): string {
  return address.transport === "unix-socket"
    ? `over the Unix socket ${address.address}`
    : `over TCP to ${address.address}`;
}
