import { randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import pino from "pino";
import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { sampleEntries, sampleLdif } from "../../src/demo/index.ts";
import { createDirectoryClient, eq } from "../../src/directory/index.ts";
import { changeFeed } from "../../src/history/index.ts";
import { signDelivery } from "../../src/hooks/index.ts";
import {
  advanceDatabaseClock,
  loadInstance,
  type InstanceState,
} from "../../src/workflow/index.ts";
import { appConfig } from "../support/app-config.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";
import { startSlapd } from "../support/slapd.ts";

/**
 * The demo's HR workflows end to end, as `npm start` runs them: annal started with the demo's
 * hooks and workflows over the demo organisation in a real slapd, HR's change events posted
 * signed to the real webhook, the ticket system's answer through its own webhook, deadlines
 * passed by moving the database's clock. The access request goes through GraphQL and sign-in:
 * test/graphql has it.
 *
 * The subtests share one annal and run in order: the 30 days the last one passes would end
 * the others' waits too.
 */

t.setTimeout(300_000);

const REPO = path.resolve(import.meta.dirname, "../..");
const DAY = 24 * 3600 * 1000;
const PEOPLE = "ou=people,dc=example,dc=org";
const group = (cn: string) => `cn=${cn},ou=groups,dc=example,dc=org`;

// The demo's outbox (the ticket system's and HR's stand-in) in this test's own folder.
const outbox = t.testdir({});
process.env.ANNAL_DEMO_OUTBOX = outbox;

const slapd = await startSlapd({ seedLdif: sampleLdif() });
t.teardown(() => slapd.stop());
const db = await testDatabase(t);
const config = await appConfig(t, {
  db,
  slapd,
  captureInterval: "200ms",
  extraToml: `[hooks]
dir = "${path.join(REPO, "ops/demo/hooks")}"

[workflows]
dir = "${path.join(REPO, "ops/demo/workflows")}"
timerInterval = "100ms"
`,
});
const annal = await startAnnal({ config, log: pino({ level: "silent" }) });
t.teardown(() => annal.stop());
const directory = createDirectoryClient({
  url: slapd.url,
  bindDN: slapd.bindDN,
  password: slapd.password,
});
t.teardown(() => directory.close());

/** Posts `body` to a demo webhook, signed as the sender would with the demo's secret. */
async function post(webhook: "hr/employees" | "tickets/updates", body: unknown) {
  const text = JSON.stringify(body);
  const id = randomUUID();
  const timestamp = Math.floor(Date.now() / 1000);
  const secret = webhook === "hr/employees" ? "demo-hr-secret" : "demo-tickets-secret";
  const answer = await fetch(`${annal.url}/-hooks/${webhook}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signDelivery(secret, id, timestamp, text),
    },
    body: text,
  });
  return answer.status;
}

/** What the hook's provider resolved with for change event `eventId`, once processed. */
async function processed(eventId: string): Promise<Record<string, unknown>> {
  const row = await eventually(
    async () =>
      (
        await db.pool.query<{ data: { result: Record<string, unknown> } }>(
          "SELECT data FROM events WHERE type = 'ChangeEventProcessed' AND data->>'eventId' = $1",
          [eventId],
        )
      ).rows[0],
    { what: `change event ${eventId} processed` },
  );
  return row.data.result;
}

async function instance(
  id: string,
  until: (state: InstanceState) => boolean,
  what: string,
): Promise<InstanceState> {
  return eventually(
    async () => {
      const state = await loadInstance(db.pool, id);
      return state && until(state) ? state : undefined;
    },
    { what },
  );
}

const waitingOnRequest = (state: InstanceState) =>
  [...state.calls.values()].some((c) => c.kind === "request" && c.state === "pending");

async function groupsOf(dn: string): Promise<string[]> {
  const found: string[] = [];
  for await (const page of directory.search("dc=example,dc=org", {
    filter: eq("member", dn),
    attributes: ["cn"],
  })) {
    found.push(...page.map((entry) => entry.dn));
  }
  return found.sort();
}

/** Two engineers in several groups, neither a head: the leaver and the one rehired. */
const [leaving, rehired] = sampleEntries()
  .filter(
    (e) =>
      e.dn.endsWith(`,ou=engineering,${PEOPLE}`) &&
      String(e.attributes.title?.[0]) !== "Head of department",
  )
  .map((e) => e.dn)
  .slice(0, 2);
const uidOf = (dn: string) => /^uid=([^,]+),/.exec(dn)![1]!;
const now = () => new Date().toISOString();

t.test("joiner: HR's hire makes the entry, its default groups, and a laptop ticket", async (t) => {
  const status = await post("hr/employees", {
    id: "hr-hire-1",
    kind: "employee.hired",
    at: now(),
    employee: {
      uid: "alovelace",
      givenName: "Ada",
      sn: "Lovelace",
      mail: "alovelace@example.org",
      title: "Software Engineer",
      department: "Engineering",
    },
  });
  t.equal(status, 202);
  const started = await processed("hr-hire-1");
  t.match(started, { workflow: "joiner" });
  const joinerId = String(started.instanceId);

  const dn = `uid=alovelace,ou=engineering,${PEOPLE}`;
  const entry = await eventually(() => directory.get(dn), { what: "the joiner's entry" });
  t.match(entry.attributes, {
    cn: ["Ada Lovelace"],
    mail: ["alovelace@example.org"],
    title: ["Software Engineer"],
  });
  const waiting = await instance(joinerId, waitingOnRequest, "the joiner to wait for IT");
  t.same(await groupsOf(dn), [group("engineering"), group("vpn-users")], "default groups added");
  const child = [...waiting.calls.values()].find((c) => c.kind === "child");
  t.match(child, { definition: { name: "default-groups" }, state: "COMPLETED" });

  // The ticket system has the ticket, with the key its answer must carry.
  const folder = path.join(outbox, "tickets");
  const file = await eventually(
    async () => (await readdir(folder).catch(() => [])).find((name) => name.endsWith(".json")),
    { what: "the laptop ticket in the outbox" },
  );
  const ticket = JSON.parse(await readFile(path.join(folder, file), "utf8")) as {
    key: string;
    payload: { type: string; for: { uid: string } };
  };
  t.match(ticket.payload, { type: "laptop", for: { uid: "alovelace" } });

  t.equal(
    await post("tickets/updates", { id: "t-1", key: ticket.key, status: "in_progress", at: now() }),
    202,
  );
  t.same(await processed("t-1"), { answered: false }, "work in progress answers nothing");
  t.equal(
    await post("tickets/updates", {
      id: "t-2",
      key: ticket.key,
      status: "done",
      asset: "LT-0042",
      at: now(),
    }),
    202,
  );
  t.match(await processed("t-2"), { answered: true, instanceId: joinerId, recorded: true });
  // A key no request has: the ticket system's update fails for good, under failed work.
  const stranger = { id: "t-9", key: `${randomUUID()}:4`, status: "done", at: now() };
  t.equal(await post("tickets/updates", stranger), 202);
  const abandoned = await eventually(
    async () =>
      (
        await db.pool.query<{ data: { reason: string; error: { code: string } } }>(
          "SELECT data FROM events WHERE type = 'ChangeEventAbandoned' AND data->>'eventId' = $1",
          ["t-9"],
        )
      ).rows[0],
    { what: "the stray update given up" },
  );
  t.match(abandoned.data, { reason: "permanent_failure", error: { code: "WF_NOT_FOUND" } });

  const done = await instance(joinerId, (s) => s.status === "COMPLETED", "the joiner to complete");
  t.same(done.result, {
    uid: "alovelace",
    dn,
    groups: [group("engineering"), group("vpn-users")],
    laptop: { status: "done", asset: "LT-0042" },
  });
});

t.test("leaver ended by a rehire: the account works again, and the entry stays", async (t) => {
  const dn = rehired!;
  const uid = uidOf(dn);
  t.equal(await directory.checkPassword(dn, "demo"), true, "signs in before");
  t.equal(
    await post("hr/employees", {
      id: "hr-left-1",
      kind: "employee.left",
      at: now(),
      employee: { uid },
    }),
    202,
  );
  const leaverId = String((await processed("hr-left-1")).instanceId);
  await instance(leaverId, waitingOnRequest, "the leaver to wait");
  t.equal(await directory.checkPassword(dn, "demo"), false, "disabled");

  t.equal(
    await post("hr/employees", {
      id: "hr-rehire-1",
      kind: "employee.hired",
      at: now(),
      employee: {
        uid,
        givenName: "Back",
        sn: "Again",
        mail: `${uid}@example.org`,
        title: "QA Engineer",
        department: "support",
      },
    }),
    202,
  );
  t.same(await processed("hr-rehire-1"), {
    workflow: "leaver",
    instanceId: leaverId,
    rehired: true,
  });
  const done = await instance(leaverId, (s) => s.status === "COMPLETED", "the leaver to end");
  t.match(done.result, { outcome: "rehired", uid, dn });
  t.equal(await directory.checkPassword(dn, "demo"), true, "the same password works again");
  t.same(await groupsOf(dn), [group("support"), group("vpn-users")], "the new department's");
});

t.test("leaver: disabled and out of every group at once, deleted 30 days later", async (t) => {
  const dn = leaving!;
  const uid = uidOf(dn);
  const before = await groupsOf(dn);
  t.ok(before.length >= 2, `in ${before.length} groups`);
  t.equal(await directory.checkPassword(dn, "demo"), true, "signs in before");

  t.equal(
    await post("hr/employees", {
      id: "hr-left-2",
      kind: "employee.left",
      at: now(),
      employee: { uid },
    }),
    202,
  );
  const started = await processed("hr-left-2");
  t.match(started, { workflow: "leaver", started: true });
  const leaverId = String(started.instanceId);
  await instance(leaverId, waitingOnRequest, "the leaver to wait for 30 days");
  t.equal(await directory.checkPassword(dn, "demo"), false, "the password no longer works");
  t.same(await groupsOf(dn), [], "in no group");
  const types = (await directory.get(dn))?.attributes.employeeType?.map(String);
  t.ok(types?.includes("disabled"), `marked disabled (${types?.join(", ")})`);

  // HR says it again (another change id): the leaver already runs, none is added.
  t.equal(
    await post("hr/employees", {
      id: "hr-left-3",
      kind: "employee.left",
      at: now(),
      employee: { uid },
    }),
    202,
  );
  t.same(await processed("hr-left-3"), {
    workflow: "leaver",
    instanceId: leaverId,
    started: false,
  });

  // The directory's changes name the instance and its steps (capture runs every 200 ms).
  const caused = await eventually(
    async () => {
      const { changes } = await changeFeed(
        db.pool,
        { causeStream: `workflow-${leaverId}` },
        { direction: "forward", limit: 100 },
      );
      return changes.length >= 1 + before.length ? changes : undefined;
    },
    { what: "the leaver's changes captured" },
  );
  t.same(
    caused.map((c) => [c.dn, c.cause?.kind === "workflow" ? c.cause.step : null]).sort(),
    [[dn, "disable the account"], ...before.map((g) => [g, `leave ${g}`])].sort(),
  );

  await advanceDatabaseClock(db.pool, 30 * DAY);
  const done = await instance(leaverId, (s) => s.status === "COMPLETED", "the leaver to delete");
  t.match(done.result, { outcome: "deleted", uid, dn });
  t.same([...(done.result as { removedFrom: string[] }).removedFrom].sort(), before);
  t.equal(await directory.get(dn), undefined, "the entry is gone");
  t.ok(await directory.get(rehired!), "the rehired one's is not");
});
