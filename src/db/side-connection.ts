import pg from "pg";
import type { Pool } from "./pool.ts";

/**
 * A connection with `pool`'s settings (server, user, options) that is not the pool's: for
 * what holds a session for good (a LISTEN, a leadership lock, the instance locks). Such a
 * holder must not take one of the pool's connections: each one it pinned was one fewer for
 * the work, and with a small pool none was left (a pool of 1 served nothing). The caller
 * connects it, handles its `error`, and ends it. A process opens at most `[database] poolSize`
 * pooled connections and these few beside them.
 */
export function sideConnection(
  pool: Pool,
  applicationName: string,
  options: { readonly pipeline?: boolean } = {},
): pg.Client {
  return new pg.Client({
    ...(pool.options as pg.ClientConfig),
    application_name: applicationName,
    // pg's own pipeline mode: each query is sent at once and answered in order (a sync of
    // its own, so one failing fails no other), for a connection several callers share.
    ...(options.pipeline ? { pipeline: true } : {}),
  });
}
