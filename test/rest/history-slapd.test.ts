import { pino } from "pino";
import t from "tap";
import { createAuthentication, createToken } from "../../src/auth/index.ts";
import { loadDirectorySchema } from "../../src/directory/schema.ts";
import { createServer } from "../../src/http/index.ts";
import { restPlugin } from "../../src/rest/index.ts";
import { captureFixture } from "../support/capture.ts";
import { nextSecond } from "../support/clock.ts";
import { GROUPS, PEOPLE, testConfig } from "./fixtures/harness.ts";

t.setTimeout(300_000);

const q = encodeURIComponent;
const ALICE = `uid=alice,${PEOPLE}`;
const BOB = `uid=bob,${PEOPLE}`;
const ONCALL = `cn=oncall,${GROUPS}`;
const STAFF = `cn=staff,${GROUPS}`;

t.test(
  "a real slapd's changes: a search at a moment, during an interval, memberships over time",
  async (t) => {
    const f = await captureFixture(t);
    await f.sync();
    const schema = await loadDirectorySchema(f.directory);
    const config = testConfig();
    const log = pino({ level: "silent" });
    const app = createServer({ config, pool: f.db.pool, projectorStatus: async () => [], log });
    await app.register(
      restPlugin({
        pool: f.db.pool,
        epoch: f.store.epoch,
        schema,
        config,
        log,
        authentication: createAuthentication({ pool: f.db.pool }),
      }),
    );
    await app.ready();
    t.teardown(() => app.close());
    const { token } = await createToken(f.db.pool, f.store, { name: "hist", access: ["read"] });
    const get = (url: string) =>
      app.inject({ method: "GET", url, headers: { authorization: `Bearer ${token}` } });

    const start = await nextSecond();
    for (const [dn, uid, title] of [
      [ALICE, "alice", "on-call"],
      [BOB, "bob", "engineer"],
    ] as const) {
      await f.directory.add(dn, { objectClass: ["inetOrgPerson"], uid, cn: uid, sn: uid, title });
    }
    await f.directory.add(ONCALL, { objectClass: ["groupOfNames"], cn: "oncall", member: ALICE });
    await f.directory.add(STAFF, { objectClass: ["groupOfNames"], cn: "staff", member: ONCALL });
    await f.sync();
    // slapd stamps changes with whole seconds: T lies in a later second than the adds, and
    // the changes in a later second than T.
    const T = await nextSecond();
    const search = `/api/entries/users?filter=${q("(title=on-call)")}&fields=uid,title&sort=uid&include=nodes,count`;
    const then = (await get(search)).json();
    t.same(
      then.nodes.map((node: { uid: string[] }) => node.uid),
      [["alice"]],
    );
    const changed = await nextSecond(T);
    await f.directory.modify(ALICE, [
      { operation: "replace", attribute: "title", values: "engineer" },
    ]);
    await f.directory.modify(BOB, [
      { operation: "replace", attribute: "title", values: "on-call" },
    ]);
    await f.directory.modify(ONCALL, [{ operation: "replace", attribute: "member", values: BOB }]);
    await f.sync();

    t.same(
      (await get(search)).json().nodes.map((node: { uid: string[] }) => node.uid),
      [["bob"]],
      "now: Bob",
    );
    const at = (await get(`${search}&at=${q(T.toISOString())}`)).json();
    t.same(at, then, "at T: what the search answered at T");

    const during = (
      await get(
        `/api/entries/users?filter=${q("title = on-call")}&fields=uid&during=${q(`${start.toISOString()}/..`)}&include=nodes,count`,
      )
    ).json();
    t.equal(during.count, 2, "Alice and Bob were on call in the interval");
    const spans = Object.fromEntries(
      during.nodes.map((node: { uid: string[]; during: { from: string; to: string | null }[] }) => [
        node.uid[0],
        node.during,
      ]),
    );
    t.equal(spans.alice.length, 1);
    t.equal(spans.alice[0].to, spans.bob[0].from, "Alice's stretch ends where Bob's begins");
    t.equal(spans.bob[0].to, null, "Bob still is");
    t.ok(
      Date.parse(spans.bob[0].from) >= Math.floor(changed.getTime() / 1000) * 1000,
      "at the change's second",
    );

    const memberships = (
      await get(
        `/api/entries/users/${q(ALICE)}/memberships?during=${q(`${start.toISOString()}/..`)}`,
      )
    ).json();
    t.match(
      memberships.nodes,
      [
        { group: { dn: ONCALL, type: "group" }, during: [{ to: spans.alice[0].to }], direct: true },
        { group: { dn: STAFF }, during: [{ to: spans.alice[0].to }], direct: false, via: [ONCALL] },
      ],
      "Alice was in oncall, and through it in staff, until the change",
    );
    const bobs = (
      await get(`/api/entries/users/${q(BOB)}/memberships?during=${q("now/..")}`)
    ).json();
    t.match(bobs.nodes, [
      { group: { dn: ONCALL }, during: [{ to: null }], direct: true },
      { group: { dn: STAFF }, during: [{ to: null }], via: [ONCALL] },
    ]);
  },
);
