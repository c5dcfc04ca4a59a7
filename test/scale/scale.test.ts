import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { createToken } from "../../src/auth/index.ts";
import { sampleLdif } from "../../src/demo/index.ts";
import { freePort } from "../../src/ports.ts";
import { EventStore } from "../../src/store/index.ts";
import { GATEWAY_TOML } from "../support/accounts.ts";
import { startPart, type AnnalProcess } from "../support/annal-process.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";
import { restartablePostgres, restartableSlapd } from "../support/restartable.ts";
import type { AnnalPart } from "../../src/app/parts.ts";
import { allProjections } from "../../projections/index.ts";
import { compareWithReplay } from "../support/projection-replay.ts";
import {
  GRAPHQL_WRITE_DN,
  newFigures,
  OUTSIDE_WRITE_DN,
  runLoad,
  until,
  walkFeed,
  type Acknowledged,
  type FeedWalk,
} from "./support/load.ts";
import {
  answerInbox,
  instancesInLog,
  retryFigures,
  runWorkflowLoad,
  SCALE_WORKFLOW,
  wrongWith,
  type WorkflowsAcknowledged,
} from "./support/workflows.ts";

/**
 * The scale suite (`npm run test:scale`; `npm test` skips it): 2 `--only api`, 2 `--only
 * workers` and 1 `--only projector` processes on one PostgreSQL and a real slapd, under a mixed
 * load (REST and GraphQL reads, GraphQL writes, signed webhook deliveries whose every fifth
 * first attempt fails and is retried, directory writes made outside annal, workflow instances
 * whose first step fails and is retried and whose dialog the suite answers from its inbox),
 * while one process
 * of each kind is SIGKILLed and started again and PostgreSQL is stopped for 10 s twice. It runs
 * ANNAL_SCALE_SECONDS (default 180) of load, then checks the invariants (among them: every
 * instance in the state its code implies, every projection equal to a replay of the log) and
 * prints the figures.
 */
const SECONDS = Number(process.env.ANNAL_SCALE_SECONDS ?? 180);
const RUN = process.env.npm_lifecycle_event === "test:scale";
const SECRET = "scale-suite-secret-0123456789";
const OUTAGE_MS = 10_000;

t.setTimeout((SECONDS + 600) * 1000);

const HOOKS = `
import { z } from "zod";
import { defineHooks, http } from "annal";

const body = z.object({ id: z.string(), person: z.string(), at: z.string() });

export default defineHooks({
  name: "crm",
  webhooks: {
    people: http.webhook({
      body,
      signature: { secrets: ["\${CRM_SECRET}"] },
      rateLimit: false,
      map: (b) => [{ source: "crm", eventId: b.id, type: "person.updated", subject: b.person, occurredAt: b.at, data: {} }],
    }),
  },
  provider: {
    retry: { limit: 5, delay: "1s" },
    async process(envelope, context) {
      if (Number(envelope.eventId.slice(2)) % 5 === 0 && context.attempt === 1) {
        throw new Error("the first attempt of every fifth delivery fails");
      }
      return { done: envelope.eventId };
    },
  },
});
`;

t.test(
  "many processes under load, killed in turn, across two PostgreSQL restarts",
  { skip: RUN ? false : "run with npm run test:scale" },
  async (t) => {
    const postgres = await restartablePostgres(t);
    const db = await testDatabase(t, { server: postgres.url });
    const slapd = await restartableSlapd(t, { seedLdif: sampleLdif() });
    const cwd = t.testdir({
      "annal.toml": `[database]
poolSize = 10
connectionTimeout = "5s"

[directory]
url = "${slapd.url}"
bindDN = "${slapd.bindDN}"
password = "\${LDAP_PASSWORD}"
base = "dc=example,dc=org"

[[directory.types]]
name = "user"
base = "ou=people,dc=example,dc=org"
filter = "(objectClass=inetOrgPerson)"

[directory.capture]
interval = "2s"

[hooks]
dir = "hooks"

[workflows]
dir = "workflows"
timerInterval = "200ms"

${GATEWAY_TOML}`,
      hooks: { "crm.ts": HOOKS },
      workflows: { "scale.ts": SCALE_WORKFLOW },
    });
    const env = { DATABASE_URL: db.url, LDAP_PASSWORD: slapd.password, CRM_SECRET: SECRET };
    const apiPorts = [await freePort(), await freePort()];
    const start = (part: AnnalPart, port?: number) =>
      startPart(t, part, {
        cwd,
        env: port === undefined ? env : { ...env, PORT: String(port) },
        // A start bundles the hooks and workflows; on a loaded machine that takes a while.
        timeoutMs: 180_000,
      });
    const processes: Record<string, AnnalProcess> = {};
    // The first start imports the directory and migrates: one process first, then the others.
    processes["api-1"] = await start("api", apiPorts[0]);
    const others = await Promise.all([
      start("api", apiPorts[1]),
      start("workers"),
      start("workers"),
      start("projector"),
    ]);
    [processes["api-2"], processes["workers-1"], processes["workers-2"], processes.projector] =
      others;
    const store = await EventStore.open(db.pool);
    const { token } = await createToken(db.pool, store, {
      name: "scale",
      access: ["read", "write"],
    });

    const figures = newFigures();
    const acknowledged: Acknowledged = { deliveries: [], titles: [], descriptions: [] };
    const feed: FeedWalk = { cursor: undefined, changeIds: [] };
    const stop = new AbortController();
    const workflows: WorkflowsAcknowledged = { started: new Map(), answered: new Set() };
    const target = {
      apiUrls: () => apiPorts.map((port) => `http://127.0.0.1:${port}`),
      token,
      webhookSecret: SECRET,
      ldap: { url: slapd.url, bindDN: slapd.bindDN, password: slapd.password },
    };
    const began = Date.now();
    const load = Promise.all([
      runLoad(target, stop.signal, figures, acknowledged, feed),
      runWorkflowLoad(target, stop.signal, figures, workflows),
    ]);
    const faults: { at: string; what: string }[] = [];
    const fault = async (fraction: number, what: string, act: () => Promise<void>) => {
      await until(began + fraction * SECONDS * 1000);
      faults.push({ at: `${Math.round((Date.now() - began) / 1000)} s`, what });
      await act();
    };
    const restart = async (name: string, part: AnnalPart, port?: number) => {
      await processes[name]!.kill();
      processes[name] = await start(part, port);
    };
    await fault(0.1, "SIGKILL api-1, start it again", () => restart("api-1", "api", apiPorts[0]));
    await fault(0.22, "SIGKILL workers-1, start it again", () => restart("workers-1", "workers"));
    await fault(0.34, "SIGKILL the projector, start it again", () =>
      restart("projector", "projector"),
    );
    for (const fraction of [0.46, 0.72]) {
      await fault(fraction, `PostgreSQL stopped (fast) for ${OUTAGE_MS / 1000} s`, async () => {
        await postgres.stop();
        await until(Date.now() + OUTAGE_MS);
        await postgres.start();
      });
    }
    await until(began + SECONDS * 1000);
    stop.abort();
    await load;
    const loadMs = Date.now() - began;

    for (const [name, running] of Object.entries(processes)) {
      t.equal(running.child.exitCode, null, `${name} is still running`);
    }
    t.same(
      Object.keys(figures.errors).filter((kind) => / 500 /.test(kind)),
      [],
      "no request was answered 500",
    );

    // Every delivery acknowledged is stored once and processed once.
    await eventually(
      async () => {
        const { rows } = await db.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM events WHERE type = 'ChangeEventProcessed'",
        );
        return rows[0]!.n >= acknowledged.deliveries.length;
      },
      { what: "every acknowledged delivery is processed", timeout: 180_000, interval: 500 },
    );
    const received = await countBy(db.pool, "ChangeEventReceived", "data->'envelope'->>'eventId'");
    const processed = await countBy(db.pool, "ChangeEventProcessed", "data->'result'->>'done'");
    t.same(
      acknowledged.deliveries.filter((id) => received.get(id) !== 1),
      [],
      "every acknowledged delivery is stored exactly once",
    );
    t.same(
      acknowledged.deliveries.filter((id) => processed.get(id) !== 1),
      [],
      "every acknowledged delivery is processed exactly once",
    );
    t.same(
      [...processed].filter(([, n]) => n > 1),
      [],
      "no delivery is processed twice",
    );

    // Every directory change, made through annal or outside it, is in the log exactly once.
    const lastOf = (values: readonly string[]) => values.at(-1);
    for (const [dn, attribute, values] of [
      [GRAPHQL_WRITE_DN, "title", acknowledged.titles],
      [OUTSIDE_WRITE_DN, "description", acknowledged.descriptions],
    ] as const) {
      await eventually(
        async () => (await changesSetting(db.pool, dn, attribute)).has(lastOf(values) ?? ""),
        { what: `capture records the last ${attribute} written`, timeout: 120_000, interval: 500 },
      );
      const recorded = await changesSetting(db.pool, dn, attribute);
      t.same(
        values.filter((value) => recorded.get(value) !== 1),
        [],
        `every ${attribute} written (${values.length}) is one change in the log`,
      );
    }

    // The change feed, walked by cursor across the whole run (and on to its end now), served
    // every directory change of the log once: nothing missing, nothing repeated.
    const changeTypes = ["EntryAdded", "EntryModified", "EntryRenamed", "EntryDeleted"];
    const logged = async () =>
      (
        await db.pool.query<{ id: string }>("SELECT id FROM events WHERE type = ANY($1)", [
          changeTypes,
        ])
      ).rows.map((r) => r.id);
    await eventually(
      async () => {
        while ((await walkFeed(`http://127.0.0.1:${apiPorts[0]}`, token, feed)) > 0);
        return feed.changeIds.length >= (await logged()).length;
      },
      { what: "the feed walk reaches the log's end", timeout: 120_000, interval: 500 },
    );
    const inLog = await logged();
    const walked = new Set(feed.changeIds);
    t.equal(walked.size, feed.changeIds.length, "the feed served no change twice");
    t.same(
      inLog.filter((id) => !walked.has(id)),
      [],
      `the feed served every change of the log (${inLog.length})`,
    );

    // Every instance, started and answered through GraphQL across the kills and restarts, ends
    // as its code implies. Those still waiting for their answer get it now.
    const instances = await eventually(
      async () => {
        await answerInbox(target, workflows);
        const all = await instancesInLog(db.pool);
        return all.every((i) => i.status !== undefined) ? all : undefined;
      },
      { what: "every workflow instance ends", timeout: 180_000, interval: 500 },
    );
    const ids = new Set(instances.map((i) => i.id));
    t.same(
      [...workflows.started].filter(([, id]) => !ids.has(id)),
      [],
      `every acknowledged start is an instance (${workflows.started.size})`,
    );
    t.same(
      instances.map(wrongWith).filter((wrong) => wrong !== undefined),
      [],
      `every instance (${instances.length}) completed, its dialog answered once, its step retried as told`,
    );
    await eventually(
      async () => {
        const { rows } = await db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM projection_workflows.workflow_instances
            WHERE definition = 'scale' AND status = 'COMPLETED'`,
        );
        return rows[0]!.n === instances.length;
      },
      { what: "the workflows projection shows every instance COMPLETED", timeout: 60_000 },
    );

    // Every projection equals a replay of the log into a scratch schema, up to its checkpoint.
    const replayed: Record<string, number> = {};
    for (const projection of allProjections) {
      const { events, differences } = await compareWithReplay(db.pool, projection);
      replayed[projection.name] = events;
      t.same(differences, [], `projection ${projection.name} equals its replay (${events} events)`);
    }

    const report = {
      seconds: Math.round(loadMs / 1000),
      processes: "2 api, 2 workers, 1 projector",
      faults,
      served: figures.served,
      servedTotal: Object.values(figures.served).reduce((a, b) => a + b, 0),
      errors: figures.errors,
      longestPauseMs: figures.longestPauseMs,
      longestPauseBy: figures.longestPauseBy,
      acknowledged: {
        deliveries: acknowledged.deliveries.length,
        graphqlWrites: acknowledged.titles.length,
        outsideWrites: acknowledged.descriptions.length,
        workflowStarts: workflows.started.size,
        dialogAnswers: workflows.answered.size,
      },
      workflowInstances: { completed: instances.length, ...retryFigures(instances) },
      projectionsReplayed: replayed,
    };
    const file = path.join(tmpdir(), "annal-scale-figures.json");
    writeFileSync(file, JSON.stringify(report, null, 2));
    t.comment(`scale figures (also in ${file}):\n${JSON.stringify(report, null, 2)}`);
  },
);

async function countBy(
  pool: import("../../src/db/index.ts").Pool,
  type: string,
  key: string,
): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ key: string; n: number }>(
    `SELECT ${key} AS key, count(*)::int AS n FROM events WHERE type = $1 GROUP BY 1`,
    [type],
  );
  return new Map(rows.map((r) => [r.key, r.n]));
}

/** How many EntryModified events of `dn` set `attribute` to each value (it was not that before). */
async function changesSetting(
  pool: import("../../src/db/index.ts").Pool,
  dn: string,
  attribute: string,
): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ before: unknown; after: unknown }>(
    `SELECT data->'before'->'attributes'->$2 AS before, data->'after'->'attributes'->$2 AS after
       FROM events WHERE type = 'EntryModified' AND lower(data->>'dn') = lower($1)`,
    [dn, attribute],
  );
  const counts = new Map<string, number>();
  for (const { before, after } of rows) {
    const value = Array.isArray(after) ? String(after[0]) : undefined;
    const was = Array.isArray(before) ? String(before[0]) : undefined;
    if (value !== undefined && value !== was) counts.set(value, (counts.get(value) ?? 0) + 1);
  }
  return counts;
}
