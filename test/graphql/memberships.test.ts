import pino from "pino";
import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
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

const IDENTITY = "cn=identity-team,ou=groups,dc=example,dc=org";
const MEMBERSHIPS = `query Memberships($entry: String!, $during: String) {
  memberships(entry: $entry, during: $during) {
    group { id entryUUID dn type }
    during { from to ongoing }
    direct
    via
  }
}`;

interface Body {
  data?: { memberships?: unknown[] } | null;
  errors?: { message: string; extensions: Record<string, unknown> }[];
}

t.test(
  "GraphQL's memberships answer what the REST channel's do, nested groups included",
  async (t) => {
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
    const headers = { authorization: `Bearer ${token}` };
    await eventually(
      async () =>
        (await db.pool.query("SELECT 1 FROM capture_checkpoints WHERE source = 'accesslog'"))
          .rowCount,
      { what: "the first start's import" },
    );
    await waitForProjection(db.pool, "entry_versions", await annal.store.head(), 30_000);
    const graphql = async (variables: Record<string, unknown>): Promise<Body> => {
      const response = await fetch(`${annal.url}/graphql`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ query: MEMBERSHIPS, variables }),
      });
      return (await response.json()) as Body;
    };
    const rest = async (dn: string, during?: string) => {
      const query = during === undefined ? "" : `?during=${encodeURIComponent(during)}`;
      const response = await fetch(
        `${annal.url}/api/entries/users/${encodeURIComponent(dn)}/memberships${query}`,
        { headers },
      );
      t.equal(response.status, 200);
      return ((await response.json()) as { nodes: unknown[] }).nodes;
    };

    // owojcik leaves the identity team: a membership that ended.
    const start = await nextSecond();
    const root = createDirectoryClient({
      url: slapd.url,
      bindDN: slapd.bindDN,
      password: slapd.password,
    });
    t.teardown(() => root.close());
    const versions = async () =>
      (
        await db.pool.query(
          "SELECT 1 FROM projection_entry_versions.entry_versions WHERE lower(dn) = lower($1)",
          [IDENTITY],
        )
      ).rowCount ?? 0;
    const before = await versions();
    await root.modify(IDENTITY, [{ operation: "delete", attribute: "member", values: OWOJCIK }]);
    await eventually(async () => (await versions()) > before, {
      what: "capture to record the change",
      timeout: 60_000,
    });

    for (const [entry, during] of [
      [OWOJCIK, undefined],
      [OWOJCIK, `${start.toISOString()}/..`],
      [OWOJCIK, `${start.toISOString()}/${new Date().toISOString()}`],
      // A duration back from a fixed end: both channels read the same interval.
      [PROSSI, `P7D/${new Date().toISOString()}`],
    ] as const) {
      const answer = await graphql({ entry, during });
      t.notOk(answer.errors, `${entry} ${during ?? "ever"}: no errors`);
      t.same(answer.data?.memberships, await rest(entry, during), `${entry} ${during ?? "ever"}`);
    }
    const owojcik = (await graphql({ entry: OWOJCIK })).data?.memberships as {
      group: { dn: string };
      during: { to: string | null }[];
    }[];
    const identity = owojcik.find((membership) => membership.group.dn === IDENTITY);
    t.ok(identity?.during.at(-1)?.to, "the identity team's membership ended");
    const prossi = (await graphql({ entry: PROSSI })).data?.memberships as {
      direct: boolean;
      via: string[];
    }[];
    t.ok(
      prossi.some((membership) => !membership.direct && membership.via.length > 0),
      "nested groups are included",
    );

    // The REST channel's codes for what does not read.
    const reversed = await graphql({ entry: OWOJCIK, during: "2026-03-01/2026-02-01" });
    t.match(reversed.errors, [
      { extensions: { code: "BAD_USER_INPUT", annalCode: "ANNAL_INTERVAL_REVERSED" } },
    ]);
    const unknown = await graphql({ entry: "uid=nobody,ou=people,dc=example,dc=org" });
    t.match(unknown.errors, [
      { extensions: { code: "NOT_FOUND", annalCode: "ANNAL_ENTRY_NOT_FOUND", reason: "unknown" } },
    ]);
  },
);
