import { writeFileSync } from "node:fs";
import path from "node:path";
import t from "tap";
import { reviewsProjection } from "../../projections/index.ts";
import { chainBatch, loadSigningKey, verifyChain, verifyExport } from "../../src/audit/index.ts";
import { recordPrincipals, upsertPerson } from "../../src/auth/persons.ts";
import { withTransaction } from "../../src/db/index.ts";
import {
  campaignReport,
  decideItems,
  decisionKeys,
  decisionKeysNow,
  prepareReviewItemDefinition,
  readItems,
  readProgress,
  reviewsOfMembership,
  startCampaign,
  unreviewedMemberships,
  type ReviewDefinition,
} from "../../src/reviews/index.ts";
import {
  advanceDatabaseClock,
  databaseClock,
  grantDelegation,
  type Actor,
} from "../../src/workflow/index.ts";
import { captureFixture } from "../support/capture.ts";
import { eventually } from "../support/eventually.ts";
import { compareWithReplay } from "../support/projection-replay.ts";
import { definitionsDir, workflowFixture, type WorkflowFixture } from "../support/workflow.ts";

t.setTimeout(240_000);

const BASE = "dc=example,dc=org";
const PEOPLE = `ou=people,${BASE}`;
const GROUPS = `ou=groups,${BASE}`;
const SECURITY = `cn=security,${GROUPS}`;
const dn = (uid: string) => `uid=${uid},${PEOPLE}`;
const person = (uid: string) =>
  `dn: ${dn(uid)}\nobjectClass: inetOrgPerson\nuid: ${uid}\ncn: ${uid}\nsn: ${uid}\n`;
const group = (cn: string, owner: string, members: string[]) =>
  [
    `dn: cn=${cn},${GROUPS}`,
    "objectClass: groupOfNames",
    `cn: ${cn}`,
    `owner: ${dn(owner)}`,
    ...members.map((m) => `member: ${dn(m)}`),
    "",
  ].join("\n");

const DEFINITION: ReviewDefinition = {
  name: "quarterly-groups",
  title: "Quarterly review of group memberships",
  scope: { groups: "(objectClass=groupOfNames)", base: GROUPS },
  reviewers: { by: "owner", managerAttribute: "manager", fallback: SECURITY },
  schedule: "manual",
  deadline: "2d",
  escalation: [{ after: "1d", to: [SECURITY], mode: "add" }],
  undecided: "keep",
  reasonRequiredForKeep: true,
};

/** A signed-in person as a sign-in records them, so that delegations can name them. */
async function signedIn(f: WorkflowFixture, name: string, groups: string[] = []): Promise<Actor> {
  const account = await withTransaction(f.pool, async (tx) => {
    const made = await upsertPerson(tx, f.store, {
      origin: "directory",
      subject: dn(name),
      name,
      displayName: null,
      dn: dn(name),
    });
    await recordPrincipals(
      tx,
      f.store,
      made.id,
      { principals: groups, count: groups.length },
      1000,
      "sign-in",
    );
    return made;
  });
  return { accountId: account.id, name, dn: dn(name), principals: groups, access: [] };
}

t.test(
  "a whole campaign: decided by two reviewers, one delegated, one escalated, one left undecided past its deadline, revocations captured back, the signed report verified",
  async (t) => {
    const c = await captureFixture(t, {
      seedLdif: [
        ...["alice", "bob", "olga", "sam", "carol", "dave", "erin", "frank", "gina"].map(person),
        group("eng", "alice", ["carol", "dave"]),
        group("ops", "bob", ["erin", "frank", "gina"]),
        group("security", "sam", ["sam"]),
      ].join("\n"),
    });
    await c.sync();
    const f = await workflowFixture(t, {
      dir: definitionsDir(t, {}),
      db: c.db,
      builtIn: [await prepareReviewItemDefinition()],
      bindings: {
        directory: { client: c.directory, base: c.slapd.base, boundAs: c.slapd.bindDN },
      },
    });
    const admin: Actor = { ...(await signedIn(f, "admin")), access: ["operator"] };
    const alice = await signedIn(f, "alice");
    const bob = await signedIn(f, "bob");
    const olga = await signedIn(f, "olga");
    const sam = await signedIn(f, "sam", [SECURITY]);

    // The security group is in scope too: its owner reviews its one member.
    const started = await startCampaign(f, DEFINITION, { as: admin });
    t.equal(started.items, 6, "one item per membership of the three groups");
    t.same(started.unreviewable, []);
    const { campaignId } = started;

    const items = await eventually(
      async () => {
        await c.sync();
        const now = await readItems(f.pool, campaignId, await databaseClock(f.pool));
        return now.length === 6 && now.every((item) => item.assignees.length > 0) ? now : undefined;
      },
      { what: "every item's dialog to be open", timeout: 60_000 },
    );
    const itemOf = (member: string) => items.find((item) => item.member_dn === dn(member))!;
    t.match(itemOf("carol"), {
      group_dn: `cn=eng,${GROUPS}`,
      reviewers: [dn("alice")],
      began: { kind: "import", position: Number },
      last_review: null,
    });

    // Alice decides both of hers at once; a keep without a reason is refused, on its own.
    const refused = await decideItems(
      f,
      campaignId,
      [{ itemId: itemOf("carol").item_id, decision: "keep" }],
      alice,
    );
    t.match(refused, [{ error: { code: "ANNAL_REVIEW_DECISION_INVALID" } }]);
    const byAlice = await decideItems(
      f,
      campaignId,
      [
        { itemId: itemOf("carol").item_id, decision: "keep", reason: "still on the team" },
        { itemId: itemOf("dave").item_id, decision: "revoke", reason: "moved to sales" },
      ],
      alice,
    );
    t.same(
      byAlice.map((o) => o.error),
      [null, null],
    );
    // Alice is no reviewer of ops: to her, its items do not exist (as any dialog not hers).
    const notHers = await decideItems(
      f,
      campaignId,
      [{ itemId: itemOf("erin").item_id, decision: "keep", reason: "x" }],
      alice,
    );
    t.match(notHers, [{ error: { code: "WF_NOT_FOUND" } }]);

    // Bob is away: Olga decides for him.
    await grantDelegation(f, {
      as: bob,
      to: olga.accountId,
      until: new Date((await databaseClock(f.pool)).getTime() + 7 * 86_400_000),
    });
    // Olga's items now include Bob's: his three open ones.
    const olgas = await readItems(f.pool, campaignId, await databaseClock(f.pool), {
      state: "open",
      assignedTo: await decisionKeys(f.pool, olga, await databaseClock(f.pool)),
    });
    t.same(
      olgas.map((item) => item.member_dn).sort(),
      [dn("erin"), dn("frank"), dn("gina")],
      "a delegate's items are the delegator's",
    );
    // As a page reads them: the keys with the database's clock, in one statement.
    const page = await decisionKeysNow(f.pool, olga);
    t.same(
      (await readItems(f.pool, campaignId, page.now, { state: "open", assignedTo: page.keys })).map(
        (item) => item.member_dn,
      ),
      olgas.map((item) => item.member_dn),
      "the same through decisionKeysNow",
    );
    const byOlga = await decideItems(
      f,
      campaignId,
      [{ itemId: itemOf("erin").item_id, decision: "keep", reason: "on call" }],
      olga,
    );
    t.same(
      byOlga.map((o) => o.error),
      [null],
    );
    // Sam, owner of security, keeps his own group's member (himself).
    await decideItems(
      f,
      campaignId,
      [{ itemId: itemOf("sam").item_id, decision: "keep", reason: "security lead" }],
      sam,
    );

    // A day passes: the open items escalate to the security group, and Sam revokes Frank's.
    await advanceDatabaseClock(f.pool, 86_400_000 + 60_000);
    await eventually(
      async () => {
        await c.sync();
        const now = await readItems(f.pool, campaignId, await databaseClock(f.pool), {
          state: "open",
        });
        return now.length === 2 && now.every((item) => item.escalation_level === 0)
          ? now
          : undefined;
      },
      { what: "the two open items to escalate", timeout: 60_000 },
    );
    const bySam = await decideItems(
      f,
      campaignId,
      [{ itemId: itemOf("frank").item_id, decision: "revoke", reason: "left the company" }],
      sam,
    );
    t.same(
      bySam.map((o) => o.error),
      [null],
    );

    // The deadline passes: Gina's item is kept and flagged as undecided.
    await advanceDatabaseClock(f.pool, 86_400_000);
    const done = await eventually(
      async () => {
        await c.sync();
        const now = await readItems(f.pool, campaignId, await databaseClock(f.pool));
        return now.every((item) => item.state !== "open") &&
          now.filter((item) => item.revocation === "done" && item.change_position !== null)
            .length === 2
          ? now
          : undefined;
      },
      { what: "every item decided or undecided, and both revocations captured", timeout: 60_000 },
    );
    const final = (member: string) => done.find((item) => item.member_dn === dn(member))!;
    t.match(final("carol"), { state: "decided", decision: "keep", decided_by: { name: "alice" } });
    t.match(final("dave"), { state: "decided", decision: "revoke", revocation: "done" });
    t.match(final("erin"), {
      state: "decided",
      decision: "keep",
      decided_by: { name: "olga" },
      decided_for: { name: "bob" },
    });
    t.match(final("frank"), {
      decision: "revoke",
      decided_by: { name: "sam" },
      escalation_level: 0,
      revocation: "done",
    });
    t.match(final("gina"), { state: "undecided", decision: "keep", escalation_level: 0 });

    // The revocations came back through capture, caused by the item's step, made as the reviewer.
    const eng = await c.directory.get(`cn=eng,${GROUPS}`);
    t.same(eng?.attributes.member, [dn("carol")]);
    const changes = await c.db.pool.query<{ actor: string; causation_id: string }>(
      `SELECT c.actor, c.causation_id FROM projection_changes.changes AS c
        WHERE c.position = $1`,
      [final("dave").change_position],
    );
    t.match(changes.rows[0]?.actor, /uid=alice/i, "the directory records the reviewer");

    const progress = await readProgress(f.pool, campaignId, await databaseClock(f.pool));
    t.match(progress, {
      total: 6,
      open: 0,
      decided: 5,
      undecided: 1,
      escalated: 2,
      kept: 4,
      revoked: 2,
    });

    // Kept by the deadline, nobody looked at it: gina's membership is still unreviewed, and
    // erin's and frank's, kept by bob, are not.
    const unreviewed = await unreviewedMemberships(f.pool, new Date(0), { first: 100, offset: 0 });
    const ops = unreviewed.filter((row) => /^cn=ops,/i.test(row.groupDn));
    t.same(
      ops.map((row) => [row.memberDn.toLowerCase(), row.lastReviewedAt]),
      [[dn("gina").toLowerCase(), null]],
      "an item left undecided is no review",
    );

    const history = await reviewsOfMembership(
      f.pool,
      dn("dave"),
      `cn=eng,${GROUPS}`,
      await databaseClock(f.pool),
    );
    t.match(history, [
      { decision: "revoke", decided_by: { name: "alice" }, reason: "moved to sales" },
    ]);

    // The signed report holds every item and verifies with the public key alone.
    // The chainer links the log (annal runs one; here by hand).
    while ((await chainBatch(f.pool, 1000)) > 0);
    const key = await loadSigningKey({ dataDir: t.testdir({}) });
    const report = await campaignReport(f.pool, campaignId, key);
    const file = path.join(t.testdir({}), "report.json");
    writeFileSync(file, report.body);
    const statement = await verifyExport(file, report.signature, { keys: [{ ...key.publicJwk }] });
    t.equal(statement.sha256.length, 64);
    const body = JSON.parse(report.body) as {
      items: { member: string; directoryChange: unknown }[];
    };
    t.equal(body.items.length, 6);
    t.match(
      body.items.find((item) => item.member === dn("dave")),
      {
        directoryChange: { position: Number },
      },
    );
    // The events the report is made of are in the hash chain its statement names.
    t.ok(statement.chainHead, "the statement names the chain's link");
    t.ok(statement.chainHead!.position <= statement.logPosition.position);
    const verified = await verifyChain(f.pool);
    t.ok(verified.last!.at.position >= statement.chainHead!.position, "log verify holds past it");
    writeFileSync(file, report.body.replace("moved to sales", "moved to sails"));
    await t.rejects(verifyExport(file, report.signature, { keys: [{ ...key.publicJwk }] }), {
      code: "ANNAL_SIGNATURE_INVALID",
    });

    // Campaign state is a projection: replaying the log gives the same tables.
    const replayed = await compareWithReplay(f.pool, reviewsProjection);
    t.same(replayed.differences, [], "the reviews projection replays to the same tables");
  },
);
