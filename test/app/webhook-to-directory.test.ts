import { randomUUID } from "node:crypto";
import path from "node:path";
import pino from "pino";
import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { signDelivery } from "../../src/hooks/index.ts";
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
    let change: { causation_id: string | null; actor: string; attributes: string[] } | undefined;
    for (let waited = 0; !change && waited < 20_000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const rows = await db.pool.query(
        "SELECT causation_id, actor, attributes FROM projection_changes.changes WHERE dn = $1",
        [TURING],
      );
      change = rows.rows[0];
    }
    t.ok(change, "the directory change was captured");
    t.same(change?.attributes, ["title"]);
    t.equal(change?.causation_id, received.rows[0]!.id, "its cause is the change event");
    t.equal(change?.actor, slapd.bindDN);
  },
);
