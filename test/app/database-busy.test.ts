import t from "tap";
import { createToken } from "../../src/auth/index.ts";
import type { PoolClient } from "../../src/db/index.ts";
import { startAccountsAnnal } from "../support/accounts.ts";
import { eventually } from "../support/eventually.ts";

t.setTimeout(180_000);

/**
 * Every wait for a pooled connection is bounded: with every connection of annal's pool held
 * (here by the test), a request waits `[database] connectionTimeout` and is answered 503 with
 * `Retry-After` and `ANNAL_DATABASE_BUSY` (in GraphQL's `extensions.code`), instead of hanging;
 * once the connections are back, the same requests are served.
 */
t.test(
  "a request that gets no pooled connection in time is a 503 with Retry-After, not a hang",
  async (t) => {
    // Three seconds, not one: annal's own start shares these two connections among its parts,
    // and on a busy machine a part waited past one second and the start failed (the machine
    // ran a soak beside the suite).
    const app = await startAccountsAnnal(t, {
      databaseToml: `poolSize = 2\nconnectionTimeout = "3s"`,
    });
    const { token } = await createToken(app.db.pool, app.store, {
      name: "reader",
      access: ["read"],
    });
    const headers = { authorization: `Bearer ${token}` };
    const before = await fetch(`${app.url}/api/entries/users`, { headers });
    t.equal(before.status, 200, "annal serves with a pool of two");

    // The test takes each of annal's connections as it comes free, and keeps it: nothing annal
    // runs holds one for good (its listeners and locks have connections of their own).
    const pool = app.annal.store.pool;
    const held: PoolClient[] = [];
    const release = () => held.splice(0).forEach((client) => client.release());
    t.teardown(release);
    while (held.length < pool.options.max!) {
      held.push(
        await eventually(() => pool.connect().catch(() => undefined), {
          what: "one of annal's connections to be free",
        }),
      );
    }

    const rest = await fetch(`${app.url}/api/entries/users`, {
      headers,
      signal: AbortSignal.timeout(30_000),
    });
    t.equal(rest.status, 503, "REST: 503");
    t.equal(rest.headers.get("retry-after"), "1", "REST: Retry-After");
    const problem = (await rest.json()) as { code?: string };
    t.equal(problem.code, "ANNAL_DATABASE_BUSY", "REST: the code");

    const gql = await app.graphql(`{ workflowDefinitions { name } }`, headers);
    t.equal(
      gql.body.errors?.[0]?.extensions?.code,
      "ANNAL_DATABASE_BUSY",
      `GraphQL: the code in extensions (${JSON.stringify(gql.body.errors)})`,
    );

    release();
    const served = await fetch(`${app.url}/api/entries/users`, {
      headers,
      signal: AbortSignal.timeout(30_000),
    });
    t.equal(served.status, 200, "with the connections back, the same request is served");
  },
);
