import { randomUUID } from "node:crypto";
import path from "node:path";
import pino from "pino";
import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { createToken } from "../../src/auth/index.ts";
import { signDelivery } from "../../src/hooks/index.ts";
import { eventually } from "../support/eventually.ts";
import { appConfig } from "../support/app-config.ts";
import { testDatabase } from "../support/postgres.ts";
import { startSlapd } from "../support/slapd.ts";

const DEMO_HOOKS = path.resolve(import.meta.dirname, "../../ops/demo/hooks");
const TURING = "uid=aturing,ou=people,dc=example,dc=org";

/**
 * The audit trail answers "why did this entry change": a change event posted to the demo HR
 * webhook is processed by its provider, which sets a title in the directory; capture records
 * that change with the change event as its cause. Everything real: annal as `annal start`
 * runs it, slapd, PostgreSQL, HTTP.
 */
t.test(
  "a directory change made by a webhook's provider is linked to the change event",
  async (t) => {
    const slapd = await startSlapd({
      seedLdif: `dn: ${TURING}\nobjectClass: inetOrgPerson\nuid: aturing\ncn: Alan Turing\nsn: Turing\n`,
    });
    t.teardown(() => slapd.stop());
    const db = await testDatabase(t);
    const config = await appConfig(t, {
      db,
      slapd,
      captureInterval: "200ms",
      extraToml: `[hooks]
dir = "${DEMO_HOOKS}"
`,
    });
    const annal = await startAnnal({ config, log: pino({ level: "silent" }) });
    t.teardown(() => annal.stop());

    const body = JSON.stringify({
      id: "hr-7",
      kind: "employee.updated",
      at: new Date().toISOString(),
      employee: { uid: "aturing", title: "Head of Research" },
    });
    const id = randomUUID();
    const timestamp = Math.floor(Date.now() / 1000);
    const answer = await fetch(`${annal.url}/-hooks/hr/employees`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": id,
        "webhook-timestamp": String(timestamp),
        // The demo file's secret when HR_WEBHOOK_SECRET is unset.
        "webhook-signature": signDelivery("demo-hr-secret", id, timestamp, body),
      },
      body,
    });
    t.equal(answer.status, 202);

    const received = await db.pool.query<{ id: string }>(
      "SELECT id FROM events WHERE type = 'ChangeEventReceived'",
    );
    t.equal(received.rowCount, 1, "the change event is stored");
    const change = await eventually(
      async () =>
        (
          await db.pool.query<{ causation_id: string | null; actor: string; attributes: string[] }>(
            "SELECT causation_id, actor, attributes FROM projection_changes.changes WHERE dn = $1",
            [TURING],
          )
        ).rows[0],
      { what: "the directory change is captured" },
    );
    t.same(change.attributes, ["title"]);
    t.equal(change.causation_id, received.rows[0]!.id, "its cause is the change event");
    t.equal(change.actor, slapd.bindDN);

    // The change feed shows it: the change event, from which webhook, about whom.
    const { token } = await createToken(db.pool, annal.store, {
      name: "auditor",
      access: ["read"],
    });
    const feed = await fetch(`${annal.url}/api/changes`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const nodes = ((await feed.json()) as { nodes: { dn: string; cause: unknown }[] }).nodes;
    t.same(nodes.find((node) => node.dn === TURING)?.cause, {
      kind: "changeEvent",
      id: received.rows[0]!.id,
      webhook: "hr/employees",
      source: "hr",
      eventId: "hr-7",
      subject: "aturing",
    });
  },
);
