import t from "tap";
import { createToken } from "../../src/auth/index.ts";
import { startAccountsAnnal } from "../support/accounts.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";
import { restartablePostgres } from "../support/restartable.ts";

t.setTimeout(240_000);

const GRAPHQL_RESPONSE = "application/graphql-response+json";

/**
 * PostgreSQL stopped (fast shutdown) under a running annal and started again on the same data
 * directory and port: meanwhile every request is a 503 with `Retry-After` and
 * `ANNAL_DATABASE_UNREACHABLE` (REST, GraphQL in both media types, `/readyz`), never a 500 or
 * a hang; the outage is logged once; afterwards annal serves again on its own, its projector
 * goes on, and what was acknowledged before is there.
 */
t.test(
  "while PostgreSQL restarts, requests are 503 with Retry-After; annal resumes on its own",
  async (t) => {
    const postgres = await restartablePostgres(t);
    const db = await testDatabase(t, { server: postgres.url });
    const app = await startAccountsAnnal(t, { db, databaseToml: `connectionTimeout = "3s"` });
    const { token } = await createToken(db.pool, app.store, { name: "reader", access: ["read"] });
    const headers = { authorization: `Bearer ${token}` };
    const rest = () =>
      fetch(`${app.url}/api/entries/users`, { headers, signal: AbortSignal.timeout(15_000) });
    const graphql = (accept: string) =>
      fetch(`${app.url}/graphql`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", accept, origin: app.url },
        body: JSON.stringify({ query: "{ viewer { authInfo { access } } }" }),
        signal: AbortSignal.timeout(15_000),
      });
    // Served once the first import is in the projections (before, a search is 503
    // ANNAL_HISTORY_BUILDING, a passing condition, not logged as a failure).
    t.ok(
      await eventually(async () => (await rest()).status === 200 || undefined, {
        what: "the search served",
      }),
      "served before the restart",
    );
    const before = await app.store.appendToStream("restart-marker", [
      { type: "MarkerSet", data: { n: 1 } },
    ]);

    await postgres.stop();
    for (let n = 0; n < 5; n++) {
      const response = await rest();
      t.equal(response.status, 503, `REST ${n}: 503`);
      t.ok(Number(response.headers.get("retry-after")) > 0, `REST ${n}: Retry-After`);
      t.match(await response.json(), { code: "ANNAL_DATABASE_UNREACHABLE" }, `REST ${n}: the code`);
    }
    const strict = await graphql(GRAPHQL_RESPONSE);
    t.equal(strict.status, 503, "GraphQL (graphql-response+json): 503");
    t.ok(strict.headers.get("retry-after"), "GraphQL: Retry-After");
    t.match(
      await strict.json(),
      { errors: [{ extensions: { code: "ANNAL_DATABASE_UNREACHABLE" } }] },
      "GraphQL: the code in extensions",
    );
    const legacy = await graphql("application/json");
    t.match(
      await legacy.json(),
      { errors: [{ extensions: { code: "ANNAL_DATABASE_UNREACHABLE" } }] },
      "GraphQL (application/json): the code in extensions",
    );
    const ready = await fetch(`${app.url}/readyz`, { signal: AbortSignal.timeout(15_000) });
    t.equal(ready.status, 503, "/readyz: unready");
    t.match(
      await ready.json(),
      { checks: { database: { status: "failed", code: "ANNAL_DATABASE_UNREACHABLE" } } },
      "/readyz says the database is gone",
    );
    const lines = app.logged.lines;
    t.equal(
      lines.filter((l) => String(l.msg).startsWith("the database is unreachable")).length,
      1,
      "the outage is logged once",
    );
    t.same(
      lines.filter((l) => l.code === "ANNAL_INTERNAL" || l.msg === "request failed"),
      [],
      "no request is logged as annal's own failure",
    );

    await postgres.start();
    await eventually(
      async () =>
        (await fetch(`${app.url}/readyz`, { signal: AbortSignal.timeout(15_000) })).status === 200,
      { what: "annal is ready again", timeout: 60_000, interval: 250 },
    );
    t.ok(
      lines.some((l) => l.msg === "the database is reachable again"),
      "the return is logged",
    );
    t.same(
      lines.filter((l) => l.level === "error" || l.level === "fatal").map((l) => l.msg),
      ["the database is unreachable; requests are answered 503 until it is back"],
      "the outage is the one error logged: no loop logs a stack for it",
    );
    t.equal((await rest()).status, 200, "REST serves again");
    const again = await graphql(GRAPHQL_RESPONSE);
    t.equal(again.status, 200, "GraphQL serves again");
    const events = await db.pool.query<{ position: number }>(
      "SELECT position FROM events WHERE stream_id = 'restart-marker'",
    );
    t.same(
      events.rows.map((r) => r.position),
      before.events.map((e) => e.position),
      "what was acknowledged before the restart is kept",
    );
    // The projector goes on after the restart: an event appended now is applied.
    const after = await app.store.appendToStream(
      "restart-marker",
      [{ type: "MarkerSet", data: { n: 2 } }],
      { expectedVersion: 1 },
    );
    await eventually(
      async () => {
        const body = (await (await fetch(`${app.url}/readyz`)).json()) as {
          projections: { name: string; position: number }[];
        };
        return body.projections.every((p) => p.position >= after.events.at(-1)!.position);
      },
      { what: "every projection passes the event appended after the restart", timeout: 60_000 },
    );
  },
);
