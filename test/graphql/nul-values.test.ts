import pino from "pino";
import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { createToken } from "../../src/auth/index.ts";
import { sampleLdif } from "../../src/demo/index.ts";
import { waitForProjection } from "../../src/projector/index.ts";
import { GATEWAY_TOML } from "../support/accounts.ts";
import { appConfig } from "../support/app-config.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";
import { startSlapd } from "../support/slapd.ts";

interface Answer {
  data?: unknown;
  errors?: { message: string; extensions?: { code?: string; hint?: string } }[];
  extensions?: { reads?: string };
}

/**
 * PostgreSQL text cannot hold U+0000 (SQLSTATE 22021), so a value holding it never reaches the
 * projections' SQL: GraphQL refuses it as the caller's mistake, as the REST channel does.
 */
t.test("a NUL in where or q is BAD_USER_INPUT, and in a REST filter a 400", async (t) => {
  const slapd = await startSlapd({ seedLdif: sampleLdif() });
  t.teardown(() => slapd.stop());
  const db = await testDatabase(t);
  const config = await appConfig(t, { db, slapd, captureInterval: "1h", extraToml: GATEWAY_TOML });
  const annal = await startAnnal({ config, log: pino({ level: "silent" }) });
  t.teardown(() => annal.stop());
  const { token } = await createToken(db.pool, annal.store, { name: "reader", access: ["read"] });
  const authorization = `Bearer ${token}`;
  await eventually(
    async () =>
      (await db.pool.query("SELECT 1 FROM capture_checkpoints WHERE source = 'accesslog'"))
        .rowCount,
    { what: "the first start's import" },
  );
  await waitForProjection(db.pool, "entries", await annal.store.head(), 30_000);
  const ask = async (query: string, variables: Record<string, unknown> = {}) => {
    const response = await fetch(`${annal.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as Answer;
  };
  await eventually(
    async () =>
      (await ask(`{ person(by: { uid: "prossi" }) { uid } }`)).extensions?.reads === "projection",
    { what: "the gateway reading the projection" },
  );

  const nul = "ada\u0000";
  const where = await ask(
    `query ($uid: String) { people(where: { uid: { eq: $uid } }) { totalCount } }`,
    {
      uid: nul,
    },
  );
  t.match(where.errors, [
    { message: "Invalid where filter", extensions: { code: "BAD_USER_INPUT" } },
  ]);
  t.match(where.errors?.[0]?.extensions?.hint, /U\+0000/);
  const literal = await ask(`{ people(where: { uid: { eq: "ada\\u0000" } }) { totalCount } }`);
  t.match(literal.errors, [{ extensions: { code: "BAD_USER_INPUT" } }], "written in the document");
  const q = await ask(`query ($q: String) { people(q: $q) { totalCount } }`, { q: nul });
  t.match(q.errors, [{ message: "Invalid q", extensions: { code: "BAD_USER_INPUT" } }]);
  const by = await ask(`query ($uid: String) { person(by: { uid: $uid }) { uid } }`, { uid: nul });
  t.match(by.errors, [{ message: "Invalid by filter", extensions: { code: "BAD_USER_INPUT" } }]);

  const rest = await fetch(
    `${annal.url}/api/entries/users?filter=${encodeURIComponent("(uid=ada\\00)")}`,
    { headers: { authorization } },
  );
  t.equal(rest.status, 400);
  t.match(await rest.json(), { code: "ANNAL_PARAMETER_INVALID", parameter: "filter" });
});
