import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse as parseToml } from "smol-toml";
import t from "tap";
import { nextSecond } from "../support/clock.ts";
import { calendarsSection } from "../../src/config/index.ts";
import { sampleEntries, sampleLdif } from "../../src/demo/index.ts";
import { loadDefinitionFile, simulateWorkflow } from "../../src/simulate/index.ts";
import { calendarsOf } from "../../src/time/index.ts";
import { completeDialog, startWorkflow, type Actor } from "../../src/workflow/index.ts";
import { simulateCommand } from "../../src/cli/commands/simulate.ts";
import { capturedOutput } from "../cli/support.ts";
import { DEMO_CALENDARS_TOML } from "../support/accounts.ts";
import { captureFixture } from "../support/capture.ts";
import { definitionsDir, workflowFixture } from "../support/workflow.ts";

/**
 * `annal simulate` over the demo's access request: two requests to join on-call were made
 * and decided (one approved, one denied) with the deployed version, against a real slapd with
 * capture running; then a changed version that asks the operators instead of the group's
 * owner is simulated over that period. The report says what it would have done and how that
 * differs, and nothing reaches the directory or the live log.
 */

t.setTimeout(240_000);

const REPO = path.resolve(import.meta.dirname, "../..");
const DEMO = path.join(REPO, "ops/demo/workflows");
const BASE = "dc=example,dc=org";
const ON_CALL = `cn=on-call,ou=groups,${BASE}`;
const OPERATORS = `cn=annal-operators,ou=roles,${BASE}`;
const PROSSI = `uid=prossi,ou=engineering,ou=people,${BASE}`;
const OFFICE_TABLES = calendarsSection().parse(
  parseToml(DEMO_CALENDARS_TOML).calendars as unknown[],
);
const OFFICE = calendarsOf(OFFICE_TABLES);

const person = (dn: string): Actor => ({
  accountId: `00000000-0000-4000-8000-${createHash("sha256").update(dn).digest("hex").slice(0, 12)}`,
  name: /^uid=([^,]+)/.exec(dn)![1]!,
  dn,
  principals: [],
  access: [],
});
const sales = sampleEntries()
  .map((entry) => entry.dn)
  .filter((dn) => dn.includes(",ou=sales,"));
const asker = person(sales[1]!);
const other = person(sales[2]!);
const prossi = person(PROSSI);

/** The demo's access request, changed: the operators decide, not the group's owner. */
const CHANGED = readFileSync(path.join(DEMO, "access-request.ts"), "utf8")
  .replace("version: 1,", "version: 2,")
  .replace("assignees: owners,", "assignees: [OPERATORS],")
  .replace('"./shared/directory.ts"', JSON.stringify(path.join(DEMO, "shared/directory.ts")));

t.test(
  "a changed access request simulated over the requests made with the deployed one",
  async (t) => {
    t.not(CHANGED.indexOf("version: 2,"), -1);
    t.not(CHANGED.indexOf("assignees: [OPERATORS],"), -1, "the change applies to the demo's code");
    const c = await captureFixture(t, { seedLdif: sampleLdif() });
    await c.sync();
    const dir = definitionsDir(t, {
      deployed: {
        "access-request.ts": `export { default } from ${JSON.stringify(path.join(DEMO, "access-request.ts"))};\n`,
      },
      "changed.ts": CHANGED,
    });
    const f = await workflowFixture(t, {
      dir: path.join(dir, "deployed"),
      db: c.db,
      bindings: { directory: { client: c.directory, base: c.slapd.base, boundAs: c.slapd.bindDN } },
      calendars: OFFICE,
    });
    const from = new Date(Date.now() - 1000);

    const ask = async (who: Actor, approved: boolean) => {
      const { instanceId } = await startWorkflow(f, {
        name: "access-request",
        parameters: { group: "on-call", reason: `${who.name} joins the rota` },
        as: who,
      });
      const waiting = await f.settled(instanceId, "WAITING");
      const dialog = [...waiting.calls.values()].find((call) => call.kind === "dialog")!;
      // slapd stamps a change with whole seconds: the approval's write must fall in a later
      // second than the start, or the directory "as it was" at the start already holds it.
      await nextSecond();
      await completeDialog(f, {
        dialogId: (dialog as { dialogId: string }).dialogId,
        answer: { approved },
        as: prossi,
      });
      return (await f.settled(instanceId, "COMPLETED")).id;
    };
    const approved = await ask(asker, true);
    const denied = await ask(other, false);
    await c.sync();
    const to = new Date();

    const members = async () =>
      ((await c.directory.get(ON_CALL))?.attributes.member ?? []).map(String);
    const entries = async () => {
      let n = 0;
      for await (const page of c.directory.search(BASE, { attributes: ["1.1"] })) n += page.length;
      return n;
    };
    const events = async () =>
      Number((await c.db.pool.query("SELECT count(*) AS n FROM events")).rows[0].n);
    // This database's scratch ones only: the suite's other tests simulate on the same server.
    const scratchDatabases = async () =>
      Number(
        (
          await c.db.pool.query(
            `SELECT count(*) AS n FROM pg_database
              WHERE datname LIKE 'annal_simulation_' || left(encode(sha256(current_database()::bytea), 'hex'), 8) || '_%'`,
          )
        ).rows[0].n,
      );
    t.ok((await members()).includes(asker.dn!), "the approved request's membership is there");
    const before = { members: await members(), entries: await entries(), events: await events() };

    const simulated = await loadDefinitionFile(path.join(dir, "changed.ts"));
    t.equal(simulated.definition.version, 2);
    const simulate = (dialogs: "approve" | "deny" | "as-answered") =>
      simulateWorkflow({
        pool: c.db.pool,
        simulated,
        period: { from, to },
        dialogs,
        fallback: "unanswered",
        base: BASE,
        calendars: OFFICE,
      });

    t.test(
      "as answered: prossi is no operator, so the changed version would still wait",
      async (t) => {
        const report = await simulate("as-answered");
        t.match(report.summary, { starts: 2, wouldStart: 2, refused: 0, differing: 2 });
        const [first, second] = report.instances;
        t.match(first, {
          startedBy: { name: asker.name },
          deployed: {
            instanceId: approved,
            version: 1,
            status: "COMPLETED",
            result: { outcome: "approved" },
            writes: [
              { operation: "modify", dn: ON_CALL, attributes: ["member"], step: "add the member" },
            ],
          },
          simulated: {
            started: true,
            status: "WAITING",
            waitingOn: ['dialog "approve"'],
            dialogs: [
              { name: "approve", policy: "as-answered", refused: { code: "WF_FORBIDDEN" } },
            ],
            writes: [],
          },
          differences: { status: true, onlySimulated: [], onlyDeployed: [{ dn: ON_CALL }] },
        });
        t.equal(first!.deployed.writes[0]!.values?.member?.added?.[0], asker.dn);
        t.match(second, {
          deployed: { instanceId: denied, result: { outcome: "denied" }, writes: [] },
          simulated: { status: "WAITING", writes: [] },
          differences: { onlySimulated: [], onlyDeployed: [] },
        });
      },
    );

    t.test(
      "approve all: the operators approve both; the denied one would have joined",
      async (t) => {
        const report = await simulate("approve");
        const [first, second] = report.instances;
        t.match(first, {
          simulated: {
            status: "COMPLETED",
            result: { outcome: "approved", escalated: true },
            dialogs: [{ name: "approve", policy: "approve", by: { dn: OPERATORS } }],
            writes: [{ operation: "modify", dn: ON_CALL, step: "add the member", as: OPERATORS }],
          },
          differences: { onlySimulated: [], onlyDeployed: [] },
        });
        t.match(second, {
          simulated: { status: "COMPLETED", result: { outcome: "approved" } },
          differences: { result: true, onlySimulated: [{ operation: "modify", dn: ON_CALL }] },
        });
        t.same(second!.differences.onlySimulated[0]!.values, { member: { added: [other.dn] } });
        t.equal(report.summary.writes.simulated, 2);
        t.equal(report.summary.writes.deployed, 1);
      },
    );

    t.test("the command prints the table and writes the JSON report to --out", async (t) => {
      const out = path.join(t.testdir(), "report.json");
      const printed = capturedOutput();
      const code = await simulateCommand(
        {
          file: path.join(dir, "changed.ts"),
          from: from.toISOString(),
          to: to.toISOString(),
          dialogs: "approve",
          out,
        },
        {
          clock: { now: new Date(), timeZone: "UTC" },
          base: BASE,
          calendars: OFFICE_TABLES,
          open: async () => ({ pool: c.db.pool, close: async () => {} }),
        },
        printed.output,
      );
      t.equal(code, 0, printed.err.join("\n"));
      const text = printed.out.join("\n");
      t.match(text, /^simulated access-request version 2 \(/);
      t.match(text, /started +by +deployed +simulated +writes then +would write +differs/);
      t.match(
        text,
        new RegExp(`${other.name} +COMPLETED denied +COMPLETED approved +0 +1 +result, writes`),
      );
      t.match(text, `  + would write: modify ${ON_CALL} member +${other.dn}`);
      t.match(text, /2 start\(s\): 2 would have started, 0 refused/);
      const report = JSON.parse(readFileSync(out, "utf8"));
      t.match(report, { definition: { name: "access-request", version: 2 }, dialogs: "approve" });
      t.equal(report.instances.length, 2);
    });

    t.test(
      "the deployed version simulated as answered does what it did: its step reads the directory as the deployed step found it, not after that step's own write in the answer's second",
      async (t) => {
        const deployed = await loadDefinitionFile(path.join(dir, "deployed", "access-request.ts"));
        const report = await simulateWorkflow({
          pool: c.db.pool,
          simulated: deployed,
          period: { from, to },
          dialogs: "as-answered",
          fallback: "unanswered",
          base: BASE,
          calendars: OFFICE,
        });
        const [first] = report.instances;
        // What makes the case: the approval's write, stamped with whole seconds, falls in the
        // answer's second, at or before the answer (nextSecond before completeDialog).
        const answeredAt = Date.parse(String(first!.simulated.dialogs[0]!.at));
        const writtenAt = Date.parse(first!.deployed.writes[0]!.at);
        t.equal(Math.floor(writtenAt / 1000), Math.floor(answeredAt / 1000), "same second");
        t.ok(writtenAt <= answeredAt, "stamped at or before the answer");
        t.match(first, {
          deployed: { writes: [{ operation: "modify", dn: ON_CALL, step: "add the member" }] },
          simulated: {
            status: "COMPLETED",
            result: { outcome: "approved" },
            writes: [{ operation: "modify", dn: ON_CALL, step: "add the member" }],
          },
          differences: { status: false, result: false, onlySimulated: [], onlyDeployed: [] },
        });
        t.same(first!.simulated.writes[0]!.values, { member: { added: [asker.dn] } });
        t.match(report.summary, { differing: 0, writes: { deployed: 1, simulated: 1 } });
      },
    );

    t.test("nothing reached the directory or the live log", async (t) => {
      t.same(await members(), before.members, "on-call's members");
      t.equal(await entries(), before.entries, "the directory's entries");
      t.equal(await events(), before.events, "the live log's events");
      t.equal(await scratchDatabases(), 0, "every scratch database is dropped");
    });
  },
);
