import pino from "pino";
import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { readChainHead, runRetention } from "../../src/audit/index.ts";
import { createToken } from "../../src/auth/index.ts";
import { sampleLdif } from "../../src/demo/index.ts";
import { createDirectoryClient } from "../../src/directory/index.ts";
import { waitForProjection } from "../../src/projector/index.ts";
import { GATEWAY_TOML, OWOJCIK, PROSSI } from "../support/accounts.ts";
import { appConfig } from "../support/app-config.ts";
import { nextSecond } from "../support/clock.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";
import { startSlapd } from "../support/slapd.ts";

t.setTimeout(300_000);

const GROUPS = "ou=groups,dc=example,dc=org";
const ONCALL = `cn=on-call,${GROUPS}`;
const IDENTITY = `cn=identity-team,${GROUPS}`;
const NEWCOMER = "uid=newcomer,ou=engineering,ou=people,dc=example,dc=org";

/** The three questions of the README, asked of owojcik, prossi and on-call. */
const QUESTIONS = `{
  member: person(by: { uid: "owojcik" }) { uid groups { cn } }
  manager: person(by: { uid: "prossi" }) { uid reports { uid manager { uid } } }
  group(q: "on-call") { cn memberList { uid title } }
  people(first: 6, where: { department: { eq: "Engineering" } }) {
    totalCount
    nodes { uid }
    pageInfo { hasNextPage endCursor }
  }
  departments { nodes { ou hasSubordinates } }
}`;

interface Body {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions: Record<string, unknown> }[];
  extensions?: Record<string, unknown>;
}

t.test("@at answers every field, nested ones included, as the directory was then", async (t) => {
  const slapd = await startSlapd({ seedLdif: sampleLdif() });
  t.teardown(() => slapd.stop());
  const db = await testDatabase(t);
  const config = await appConfig(t, {
    db,
    slapd,
    captureInterval: "200ms",
    extraToml: GATEWAY_TOML,
  });
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
  await waitForProjection(db.pool, "entry_versions", await annal.store.head(), 30_000);
  const ask = async (query: string, variables?: Record<string, unknown>): Promise<Body> => {
    const response = await fetch(`${annal.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as Body;
  };

  // The answers at T, recorded at T; the changes come in a later second (slapd stamps whole
  // seconds, and `at` includes a change made in its second).
  const T = await nextSecond();
  const recorded = await ask(QUESTIONS);
  t.notOk(recorded.errors, "the questions answer now");
  const owojcikDN = (await ask(`{ person(by: { uid: "owojcik" }) { dn } }`)).data;
  t.same(owojcikDN, { person: { dn: OWOJCIK } });
  await nextSecond();

  const root = createDirectoryClient({
    url: slapd.url,
    bindDN: slapd.bindDN,
    password: slapd.password,
  });
  t.teardown(() => root.close());
  // owojcik leaves the identity team and joins on-call; a newcomer reports to prossi; the
  // first of prossi's reports gets another manager; on-call loses a member's title.
  const reportsThen = (recorded.data?.manager as { reports: { uid: string }[] }).reports;
  const movedReport = reportsThen.find((report) => report.uid !== "prossi")!.uid;
  await root.modify(IDENTITY, [{ operation: "delete", attribute: "member", values: OWOJCIK }]);
  const oncallThen = recorded.data?.group as { memberList: { uid: string }[] };
  if (!oncallThen.memberList.some((member) => member.uid === "owojcik")) {
    await root.modify(ONCALL, [{ operation: "add", attribute: "member", values: OWOJCIK }]);
  }
  await root.add(NEWCOMER, {
    objectClass: ["inetOrgPerson"],
    uid: "newcomer",
    cn: "New Comer",
    sn: "Comer",
    manager: PROSSI,
  });
  const movedDN = `uid=${movedReport},ou=engineering,ou=people,dc=example,dc=org`;
  await root.modify(movedDN, [{ operation: "replace", attribute: "manager", values: NEWCOMER }]);
  const firstMember = oncallThen.memberList.find((member) => member.uid !== "owojcik")!.uid;
  // Someone else leaves: deleted since T.
  const leaver = (recorded.data?.people as { nodes: { uid: string }[] }).nodes
    .map((node) => node.uid)
    .findLast((uid) => !["prossi", "owojcik", movedReport, firstMember].includes(uid))!;
  const leaverDN = `uid=${leaver},ou=engineering,ou=people,dc=example,dc=org`;
  await root.delete(leaverDN);
  await root.modify(`uid=${firstMember},ou=engineering,ou=people,dc=example,dc=org`, [
    { operation: "replace", attribute: "title", values: "Changed Since" },
  ]);

  // Capture records the changes; the answers now differ from those at T.
  const now = await eventually(
    async () => {
      const answer = await ask(QUESTIONS);
      const reports = (answer.data?.manager as { reports: { uid: string }[] }).reports;
      return reports.some((report) => report.uid === "newcomer") &&
        JSON.stringify(answer.data?.group).includes("Changed Since")
        ? answer
        : undefined;
    },
    { what: "capture to record the changes", timeout: 60_000 },
  );
  t.not(JSON.stringify(now.data), JSON.stringify(recorded.data), "the directory has changed");
  // `@at` reads the versions projection, which may trail the answers above by a batch.
  await waitForProjection(db.pool, "entry_versions", await annal.store.head(), 30_000);

  const then = await ask(`query Then($at: String!) @at(moment: $at) ${QUESTIONS}`, {
    at: T.toISOString(),
  });
  t.same(then.data, recorded.data, "the answers at T are those recorded at T");
  t.equal(then.extensions?.at, T.toISOString(), "extensions name the moment answered");
  t.notOk(then.errors);

  // The same moment in another form of the grammar: a moment within the same second.
  const literal = await ask(`query @at(moment: "${T.toISOString()}") ${QUESTIONS}`);
  t.same(literal.data, recorded.data);

  // An entry that did not exist then is NOT_FOUND, saying why.
  const missing = await ask(
    `query @at(moment: "${T.toISOString()}") { personByDn(dn: "${NEWCOMER}") { uid } }`,
  );
  t.match(missing.errors, [
    {
      extensions: { code: "NOT_FOUND", annalCode: "ANNAL_ENTRY_NOT_FOUND", reason: "not-yet" },
    },
  ]);
  t.same(missing.data, { personByDn: null });
  const known = await ask(
    `query @at(moment: "${T.toISOString()}") { personByDn(dn: "${OWOJCIK}") { uid groups { cn } } }`,
  );
  t.same(known.data, { personByDn: recorded.data?.member });
  const left = await ask(
    `query @at(moment: "${T.toISOString()}") { personByDn(dn: "${leaverDN}") { uid } }`,
  );
  t.same(left.data, { personByDn: { uid: leaver } }, "the leaver was there at T");
  const gone = await ask(`query @at(moment: "now") { personByDn(dn: "${leaverDN}") { uid } }`);
  t.match(gone.errors, [{ extensions: { code: "NOT_FOUND", reason: "deleted" } }]);

  // A moment that does not read: the REST channel's code, before any field runs.
  const bad = await ask(`query @at(moment: "the day before") { person(by: { uid: "x" }) { uid } }`);
  t.match(bad.errors, [
    {
      message: /^at: /,
      extensions: { code: "BAD_USER_INPUT", annalCode: "ANNAL_PARAMETER_INVALID", parameter: "at" },
    },
  ]);
  t.notOk(bad.data, "no field ran");

  // Retention folds what happened before T: T still answers as it did, a moment before it is
  // refused with the REST channel's 410 code, naming the horizon.
  const logHead = await annal.store.head();
  await eventually(
    async () => ((await readChainHead(db.pool))?.at.position ?? 0) >= logHead.position,
    { what: "the hash chain to reach the log's head" },
  );
  const retained = await runRetention(db.pool, { horizon: T });
  t.ok(retained.cut, "retention removed the events before T");
  const afterRetention = await ask(`query Then($at: String!) @at(moment: $at) ${QUESTIONS}`, {
    at: T.toISOString(),
  });
  t.same(afterRetention.data, then.data, "at T, the same answers after retention");
  const before = await ask(
    `query @at(moment: "${new Date(T.getTime() - 60_000).toISOString()}") ${QUESTIONS}`,
  );
  t.match(before.errors?.[0], {
    extensions: { annalCode: "ANNAL_BEFORE_RETENTION", horizon: T.toISOString() },
  });
});
