import { createServer } from "node:http";
import { once } from "node:events";
import { performance } from "node:perf_hooks";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import pg from "pg";
import type {} from "postgraphile";
import { ENTRIES, ENTRY_VALUES, VALUE_KEY_LENGTH } from "../projections/entries/index.ts";

/**
 * The second baseline of `npm run bench -- graphql --reads projection` (issue 54 item 1):
 * PostGraphile 5 over the same projection tables annal's gateway reads. A schema of its own,
 * `SCHEMA`, holds three views and a function over the live `entries` and `entry_values`, with
 * the smart tags PostGraphile needs to see relations in views:
 *
 * - `people`: the entries of type `user`, keyed by their entryUUID, with the five fields as
 *   columns read from the stored attributes (`displayName` falling back to `cn`, as the demo
 *   gateway's field does; `telephone_numbers` every value);
 * - `groups`: the entries of type `group`, their `cn` read from the stored attributes;
 * - `people_groups(person)`: the groups whose `member` holds the person's DN, found in
 *   `entry_values` by the same index (`entry_values_match`) annal's gateway uses, in the
 *   directory's order (creation order): a computed field `groups` of a person, as a list.
 *
 * Nothing is copied: each request reads the projection's rows as annal's does. PostGraphile has
 * no authentication here (annal's request carries and checks a bearer token).
 */
export const SCHEMA = "postgraphile_bench";

/**
 * Where the views read a group's `cn`: `"attributes"`, its stored attributes, as any reader of
 * `entries` would (each read decompresses the whole row, thousands of members with it); or
 * `"dn"`, the value of its DN's first RDN (`cn=…`, as every group of the sample is named), to
 * measure PostGraphile without the cost of those rows. Each has a schema of its own.
 */
export type GroupNames = "attributes" | "dn";

/** The schema of the views reading `cn` from `names`. */
export const schemaOf = (names: GroupNames): string =>
  names === "attributes" ? SCHEMA : `${SCHEMA}_dn`;

/** The request PostGraphile answers, the equivalent of annal's benchmarked one. */
export const POSTGRAPHILE_QUERY = `{ allPeople(first: 100) { nodes { uid displayName mail title telephoneNumbers groupsList { cn } } } }`;

/** Creates `SCHEMA`'s views over the live projection tables (see above). */
export async function createPostgraphileViews(
  pool: pg.Pool,
  names: GroupNames = "attributes",
): Promise<void> {
  const SCHEMA = schemaOf(names);
  const first = (name: string) => `e.attributes -> '${name}' ->> 0`;
  // The first RDN's value of a DN without escaped characters (the sample's groups).
  const cn = names === "attributes" ? first("cn") : `substring(e.dn from '^cn=([^,]*),')`;
  await pool.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await pool.query(`CREATE SCHEMA ${SCHEMA}`);
  await pool.query(`CREATE VIEW ${SCHEMA}.people AS
    SELECT e.entry_uuid AS id, e.dn, e.created_position,
           ${first("uid")} AS uid,
           coalesce(${first("displayName")}, ${first("cn")}) AS display_name,
           ${first("mail")} AS mail,
           ${first("title")} AS title,
           ARRAY(SELECT jsonb_array_elements_text(coalesce(e.attributes -> 'telephoneNumber', '[]')))
             AS telephone_numbers
      FROM ${ENTRIES} AS e WHERE e.type = 'user'`);
  await pool.query(`COMMENT ON VIEW ${SCHEMA}.people IS E'@primaryKey id'`);
  await pool.query(`CREATE VIEW ${SCHEMA}.groups AS
    SELECT e.entry_uuid AS id, e.dn, e.created_position, ${cn} AS cn
      FROM ${ENTRIES} AS e WHERE e.type = 'group'`);
  await pool.query(`COMMENT ON VIEW ${SCHEMA}.groups IS E'@primaryKey id'`);
  await pool.query(`CREATE FUNCTION ${SCHEMA}.people_groups(person ${SCHEMA}.people)
    RETURNS SETOF ${SCHEMA}.groups LANGUAGE sql STABLE AS $$
      SELECT g.* FROM ${SCHEMA}.groups AS g
       WHERE g.id IN (SELECT v.entry_uuid FROM ${ENTRY_VALUES} AS v
                       WHERE v.type = 'group' AND v.attribute = 'member'
                         AND v.value_key = left(lower(person.dn), ${VALUE_KEY_LENGTH}))
       ORDER BY g.created_position $$`);
  await pool.query(
    `COMMENT ON FUNCTION ${SCHEMA}.people_groups(${SCHEMA}.people) IS E'@behavior -connection +list'`,
  );
}

const ROLE = "postgraphile-server";

interface ServerData {
  readonly role: typeof ROLE;
  readonly database: string;
  readonly schema: string;
}

/** The worker thread: PostGraphile's HTTP server and nothing else, as annal's runs. */
async function serve(data: ServerData): Promise<void> {
  // Loaded here, in PostGraphile's thread only (GRAPHILE_ENV set), not in the benchmark's.
  const { postgraphile } = await import("postgraphile");
  const { PostGraphileAmberPreset } = await import("postgraphile/presets/amber");
  const { makePgService } = await import("postgraphile/adaptors/pg");
  const { grafserv } = await import("postgraphile/grafserv/node");
  const pool = new pg.Pool({ connectionString: data.database, max: 10 });
  // Every statement, whether PostGraphile runs it on the pool or on a client it took.
  let statements = 0;
  pool.on("connect", (client) => {
    const clientQuery = client.query.bind(client);
    client.query = ((...args: Parameters<typeof clientQuery>) => {
      statements++;
      return clientQuery(...args);
    }) as typeof client.query;
  });
  const preset: GraphileConfig.Preset = {
    extends: [PostGraphileAmberPreset],
    pgServices: [makePgService({ pool, schemas: [data.schema] })],
    grafast: { explain: false },
  };
  const pgl = postgraphile(preset);
  const serv = pgl.createServ(grafserv);
  const server = createServer();
  serv.addTo(server).catch((error: unknown) => {
    throw error;
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address() as { port: number };
  const port = parentPort!;
  port.postMessage({ url: `http://127.0.0.1:${address.port}/graphql` });
  for (;;) {
    const [ask] = (await once(port, "message")) as [string];
    if (ask === "statements") port.postMessage(statements);
    else if (ask === "busy") port.postMessage(performance.eventLoopUtilization().active);
    else if (ask === "stop") break;
  }
  server.close();
  await serv.release(); // and PostGraphile's instance with it
  await pool.end();
  port.postMessage(true);
}

/** Starts PostGraphile's thread over `database`; `ask` posts a question and waits for its answer. */
export async function startPostgraphile(database: string, names: GroupNames = "attributes") {
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { role: ROLE, database, schema: schemaOf(names) } satisfies ServerData,
    env: {
      ...process.env,
      NODE_ENV: process.env.NODE_ENV ?? "production",
      GRAPHILE_ENV: process.env.GRAPHILE_ENV ?? "production",
    },
  });
  const [ready] = (await once(worker, "message")) as [{ url: string }];
  const ask = async <T>(question: "statements" | "busy" | "stop"): Promise<T> => {
    const answer = once(worker, "message");
    worker.postMessage(question);
    return ((await answer) as [T])[0];
  };
  return {
    url: ready.url,
    ask,
    async stop() {
      await ask("stop");
      await worker.terminate();
    },
  };
}

if (!isMainThread && (workerData as Partial<ServerData> | null)?.role === ROLE) {
  await serve(workerData as ServerData);
}
