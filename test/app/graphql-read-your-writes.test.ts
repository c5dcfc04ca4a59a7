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
import { armPausePoint } from "../support/pause-points.ts";
import { waitForProjection } from "../../src/projector/index.ts";

const PROSSI = "uid=prossi,ou=engineering,ou=people,dc=example,dc=org";

/**
 * A mutation's answer can be followed by a read that already shows the change: annal as
 * `annal start` runs it, with the background capture pass an hour apart, so only the
 * mutation's own capture-and-wait can make the change visible in time.
 */
interface Answer {
  data?: unknown;
  errors?: unknown;
  extensions?: {
    logPosition: { position: number; transactionId: string } | null;
    reads: "projection" | "directory";
  };
}

async function graphql(
  url: string,
  token: string,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<Answer> {
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as Answer;
}

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
  // ... and read: the gateway reads the projections.
  await waitForProjection(db.pool, "entries", await annal.store.head(), 30_000);

  const body = await graphql(
    annal.url!,
    token,
    `
      mutation ($dn: DN) {
        updatePerson(
          dn: $dn
          input: [{ operation: replace, changes: { title: "Read Your Writes" } }]
        ) {
          title
        }
      }
    `,
    { dn: PROSSI },
  );
  t.same(body.data, { updatePerson: { title: "Read Your Writes" } });
  t.equal(body.errors, undefined);
  // The answer says which log position it reflects: at least the write's captured change.
  const changed = await db.pool.query<{ position: string }>(
    "SELECT position FROM events WHERE type = 'EntryModified' ORDER BY position DESC LIMIT 1",
  );
  t.match(body.extensions, { logPosition: { position: Number, transactionId: String } });
  t.ok(
    (body.extensions?.logPosition?.position ?? 0) >= Number(changed.rows[0]?.position),
    "the answer reflects the change it made",
  );

  // A read right after it, from the projections, sees the write.
  const read = await graphql(
    annal.url!,
    token,
    `
      {
        person(by: { uid: "prossi" }) {
          title
        }
      }
    `,
  );
  t.same(read.data, { person: { title: "Read Your Writes" } });
  t.equal(read.extensions?.reads, "projection");
  t.ok(
    (read.extensions?.logPosition?.position ?? 0) >= Number(changed.rows[0]?.position),
    "the read reflects a position at or after the write's",
  );

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

/**
 * A projection held back past `[graphql] readYourWritesTimeout`: the mutation does not wait on,
 * and its answer reads the directory, which has the write.
 */
t.test(
  "a mutation whose change the projections do not show in time answers from the directory",
  async (t) => {
    const slapd = await startSlapd({ seedLdif: sampleLdif() });
    t.teardown(() => slapd.stop());
    const db = await testDatabase(t);
    const loaded = await appConfig(t, {
      db,
      slapd,
      captureInterval: "1h",
      extraToml: GATEWAY_TOML,
    });
    const config = { ...loaded, graphql: { ...loaded.graphql, readYourWritesTimeout: 300 } };
    const annal = await startAnnal({ config, log: pino({ level: "silent" }) });
    t.teardown(() => annal.stop());
    const { token } = await createToken(db.pool, await EventStore.open(db.pool), {
      name: "editor",
      access: ["read", "write"],
    });
    await eventually(
      async () =>
        (await db.pool.query("SELECT 1 FROM capture_checkpoints WHERE source = 'accesslog'"))
          .rowCount,
      { what: "the first start's import" },
    );
    await waitForProjection(db.pool, "entries", await annal.store.head(), 30_000);
    const held = armPausePoint(t, "projector.batch.beforeApply", { subject: "entries" });
    const body = await graphql(
      annal.url!,
      token,
      `
        mutation ($dn: DN) {
          updatePerson(dn: $dn, input: [{ operation: replace, changes: { title: "Held Back" } }]) {
            title
          }
        }
      `,
      { dn: PROSSI },
    );
    await held.reached();
    t.same(body.data, { updatePerson: { title: "Held Back" } }, "the directory's answer");
    t.equal(body.extensions?.reads, "directory", "the response says it read the directory");
    held.release();
  },
);
