import { writeFile } from "node:fs/promises";
import path from "node:path";
import pino from "pino";
import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { createToken } from "../../src/auth/index.ts";
import { sampleLdif } from "../../src/demo/index.ts";
import { createDirectoryClient } from "../../src/directory/index.ts";
import { waitForProjection } from "../../src/projector/index.ts";
import { GATEWAY_TOML, PROSSI } from "../support/accounts.ts";
import { appConfig } from "../support/app-config.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";
import { startSlapd } from "../support/slapd.ts";

/** A field of the test's own that reads the directory whatever `[graphql] reads` says. */
const LIVE_SCHEMA = `extend type Query {
  personLive(q: String!): Person
    @ldapFind(
      base: "ou=people,dc=example,dc=org"
      filter: "(objectClass=inetOrgPerson)"
      qAttributes: ["uid"]
      reads: DIRECTORY
    )
}
`;

/**
 * A change made in the directory behind annal's back, before capture records it (its passes
 * an hour apart): the gateway's fields read the projection, which does not have it yet, and a
 * field with `reads: DIRECTORY` reads the directory, which does.
 */
t.test("fields read the projection; reads: DIRECTORY reads the directory", async (t) => {
  const slapd = await startSlapd({ seedLdif: sampleLdif() });
  t.teardown(() => slapd.stop());
  const db = await testDatabase(t);
  const dir = t.testdirName;
  const toml = GATEWAY_TOML.replace(
    /^schema = \[(.*)\]$/m,
    (_, globs: string) => `schema = [${globs}, ${JSON.stringify(path.join(dir, "*.graphql"))}]`,
  );
  const config = await appConfig(t, { db, slapd, captureInterval: "1h", extraToml: toml });
  // Beside the annal.toml appConfig wrote (it makes the test's directory afresh).
  await writeFile(path.join(dir, "live.graphql"), LIVE_SCHEMA);
  const annal = await startAnnal({ config, log: pino({ level: "silent" }) });
  t.teardown(() => annal.stop());
  const { token } = await createToken(db.pool, annal.store, { name: "reader", access: ["read"] });
  await eventually(
    async () =>
      (await db.pool.query("SELECT 1 FROM capture_checkpoints WHERE source = 'accesslog'"))
        .rowCount,
    { what: "the first start's import" },
  );
  await waitForProjection(db.pool, "entries", await annal.store.head(), 30_000);
  const ask = async (query: string) => {
    const response = await fetch(`${annal.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query }),
    });
    return (await response.json()) as { data?: unknown; extensions?: { reads: string } };
  };
  // The gateway turns to the projection once it has applied the import's head; an event the
  // start appended after the wait above may still be on its way.
  await eventually(
    async () =>
      (await ask(`{ person(by: { uid: "prossi" }) { uid } }`)).extensions?.reads === "projection",
    { what: "the gateway reading the projection" },
  );

  const root = createDirectoryClient({
    url: slapd.url,
    bindDN: slapd.bindDN,
    password: slapd.password,
  });
  t.teardown(() => root.close());
  const before = (await root.get(PROSSI, { attributes: ["title"] }))?.attributes.title;
  await root.modify(PROSSI, [
    { operation: "replace", attribute: "title", values: "Changed Behind Annal's Back" },
  ]);

  const body = await ask(
    `{ person(by: { uid: "prossi" }) { title } personLive(q: "prossi") { title } }`,
  );
  t.same(body.data, {
    person: { title: before?.[0] },
    personLive: { title: "Changed Behind Annal's Back" },
  });
  t.equal(body.extensions?.reads, "projection");
});
