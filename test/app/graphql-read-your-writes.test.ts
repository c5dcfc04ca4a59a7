import pino from "pino";
import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { createToken } from "../../src/auth/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { sampleLdif } from "../../src/demo/index.ts";
import { GATEWAY_TOML } from "../support/accounts.ts";
import { appConfig } from "../support/app-config.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";
import { startSlapd } from "../support/slapd.ts";

const PROSSI = "uid=prossi,ou=engineering,ou=people,dc=example,dc=org";

/**
 * A mutation's answer can be followed by a read that already shows the change: annal as
 * `annal start` runs it, with the background capture pass an hour apart, so only the
 * mutation's own capture-and-wait can make the change visible in time.
 */
t.test("after a GraphQL mutation answers, the projections already show its change", async (t) => {
  const slapd = await startSlapd({ seedLdif: sampleLdif() });
  t.teardown(() => slapd.stop());
  const db = await testDatabase(t);
  const config = await appConfig(t, {
    db,
    slapd,
    captureInterval: "1h",
    extraToml: GATEWAY_TOML,
  });
  const annal = await startAnnal({ config, log: pino({ level: "silent" }) });
  t.teardown(() => annal.stop());
  const { token } = await createToken(db.pool, await EventStore.open(db.pool), {
    name: "editor",
    access: ["read", "write"],
  });

  // Ready as a client would find it: the first start's import of the directory done.
  await eventually(
    async () =>
      (await db.pool.query("SELECT 1 FROM capture_checkpoints WHERE source = 'accesslog'"))
        .rowCount,
    { what: "the first start's import" },
  );

  const answer = await fetch(`${annal.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({
      query: `mutation($dn: DN) { updatePerson(dn: $dn, input: [{ operation: replace, changes: { title: "Read Your Writes" } }]) { title } }`,
      variables: { dn: PROSSI },
    }),
  });
  const body = (await answer.json()) as { data?: unknown; errors?: unknown };
  t.same(body, { data: { updatePerson: { title: "Read Your Writes" } } });

  // No waiting: the answer came after the change reached the projections.
  const entry = await db.pool.query(
    "SELECT attributes->'title' AS title FROM projection_entries.entries WHERE dn = $1",
    [PROSSI],
  );
  t.same(entry.rows[0]?.title, ["Read Your Writes"]);
  const change = await db.pool.query(
    "SELECT actor, attributes FROM projection_changes.changes WHERE dn = $1",
    [PROSSI],
  );
  t.same(change.rows, [
    { actor: "cn=editor,ou=service-accounts,dc=example,dc=org", attributes: ["title"] },
  ]);

  // The feed says why: this mutation, made for the account `editor`.
  const feed = await fetch(`${annal.url}/api/changes?type=modify`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const nodes = ((await feed.json()) as { nodes: { dn: string; cause: unknown }[] }).nodes;
  const cause = nodes.find((node) => node.dn === PROSSI)?.cause;
  t.match(cause, { kind: "mutation", account: "editor", id: String, requestId: String });
  const requested = await db.pool.query(
    "SELECT id, data FROM events WHERE type = 'DirectoryWriteRequested'",
  );
  t.match(requested.rows, [
    {
      id: (cause as { id: string }).id,
      data: { operation: "modify", dn: PROSSI, attributes: ["title"] },
    },
  ]);
});
