import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import pino from "pino";
import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { createToken, directoryGroupsOf, isActiveDirectory } from "../../src/auth/index.ts";
import { loadConfig } from "../../src/config/index.ts";
import {
  createDirectoryClient,
  loadDirectorySchema,
  normalizeDN,
  sidText,
} from "../../src/directory/index.ts";
import { shownValuesDirectory } from "../../src/graphql/gateway/shown-reads.ts";
import { freePort } from "../../src/ports.ts";
import { waitForProjection } from "../../src/projector/index.ts";
import { toLdif } from "../../src/slapd/index.ts";
import { Browserless, form } from "../support/browserless.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";
import { adGroup, adUser, startSambaDC } from "../support/samba.ts";

t.setTimeout(300_000);
const run = promisify(execFile);

/**
 * annal started from ops/examples/ad/annal.toml in front of Samba's AD DC (LDAPS verified
 * against the DC's own CA): AD's SIDs and GUIDs served as AD's tools show them, in REST and
 * GraphQL, a REST filter on objectSid's text form, and the example's access functions granted
 * to an AD group held by a person in a group nested three deep (AD's IN_CHAIN answers).
 */
const EXAMPLE = join(import.meta.dirname, "../../ops/examples/ad/annal.toml");
const USERS = "CN=Users,DC=example,DC=test";
const dn = (cn: string) => `CN=${cn},${USERS}`;
const PASSWORD = "Aa1-nested-groups-demo";

const SEED = toLdif([
  adUser("ada", { parent: USERS, attributes: { givenName: ["Ada"], sn: ["Lovelace"] } }),
  adUser("bob", { parent: USERS, attributes: { sn: ["Builder"] } }),
  adUser("cy", { parent: USERS, attributes: { sn: ["Cyrus"] } }),
  // ada is in annal-readers through three levels: ada ∈ team ∈ department ∈ division ∈ readers.
  adGroup("team", [dn("ada")], { parent: USERS }),
  adGroup("department", [dn("team")], { parent: USERS }),
  adGroup("division", [dn("department")], { parent: USERS }),
  adGroup("annal-readers", [dn("division")], { parent: USERS }),
  // cy is in the operators' and the auditors' groups through ops ∈ on-call.
  adGroup("ops", [dn("cy")], { parent: USERS }),
  adGroup("on-call", [dn("ops")], { parent: USERS }),
  adGroup("annal-operators", [dn("on-call")], { parent: USERS }),
  adGroup("annal-auditors", [dn("on-call")], { parent: USERS }),
]);

interface Answer {
  data?: Record<string, any> | null; // eslint-disable-line @typescript-eslint/no-explicit-any
  errors?: { message: string }[];
}

t.test(
  "the example configuration in front of AD: SIDs as S-1-5-21-…, objectSid filters, nested groups' access",
  async (t) => {
    const dc = await startSambaDC({ seedLdif: SEED });
    t.teardown(() => dc.stop());
    const tls = { caFile: dc.caFile, serverName: dc.serverName };
    const admin = createDirectoryClient({
      url: dc.url,
      bindDN: dc.bindDN,
      password: dc.password,
      tls,
    });
    t.teardown(() => admin.close());
    // Passwords for ada and bob (AD takes unicodePwd as the quoted password in UTF-16LE, over
    // TLS only), then their accounts enabled (512: a normal account).
    for (const cn of ["ada", "bob", "cy"]) {
      await admin.modify(dn(cn), [
        {
          operation: "replace",
          attribute: "unicodePwd",
          values: Buffer.from(`"${PASSWORD}"`, "utf16le"),
        },
      ]);
      await admin.modify(dn(cn), [
        { operation: "replace", attribute: "userAccountControl", values: "512" },
      ]);
    }

    const db = await testDatabase(t);
    const config = await loadConfig({
      configPath: EXAMPLE,
      cwd: t.testdir(),
      env: {
        AD_URL: dc.url,
        AD_CA_FILE: dc.caFile,
        AD_SERVER_NAME: dc.serverName,
        AD_BIND_DN: dc.bindDN,
        LDAP_PASSWORD: dc.password,
        DATABASE_URL: db.url,
        PORT: String(await freePort()),
      },
    });
    const annal = await startAnnal({ config, log: pino({ level: "silent" }) });
    t.teardown(() => annal.stop());
    const { token } = await createToken(db.pool, annal.store, { name: "reader", access: ["read"] });
    const headers = { authorization: `Bearer ${token}` };
    const get = async (path: string, extra: Record<string, string> = headers) => {
      const response = await fetch(`${annal.url}${path}`, { headers: extra });
      return { status: response.status, body: (await response.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
    };
    const graphql = async (query: string, variables: Record<string, unknown> = {}) => {
      const response = await fetch(`${annal.url}/graphql`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as Answer;
    };

    await eventually(
      async () =>
        (await db.pool.query("SELECT 1 FROM capture_checkpoints WHERE source = 'ad'")).rowCount,
      { what: "the first start's import" },
    );
    await waitForProjection(db.pool, "entries", await annal.store.head(), 30_000);

    // What AD's own tools say the Administrator's SID is.
    const shown = await run("samba-tool", [
      "user",
      "show",
      "Administrator",
      "-H",
      join(dc.dataDir, "private/sam.ldb"),
      "--attributes=objectSid",
    ]);
    const administratorSid = /^objectSid: (S-1-5-21-[\d-]+-500)$/m.exec(shown.stdout)?.[1];
    t.ok(administratorSid, `samba-tool shows the SID (${administratorSid})`);

    t.test("REST: objectSid and objectGUID as AD's tools show them", async (t) => {
      const fields = "fields=sAMAccountName,objectSid,objectGUID";
      const { status, body } = await get(
        `/api/entries/users?filter=${encodeURIComponent("(sAMAccountName=Administrator)")}&${fields}`,
      );
      t.equal(status, 200);
      const [administrator] = body.nodes;
      t.equal(administrator.objectSid, administratorSid, "objectSid as samba-tool shows it");
      t.equal(administrator.objectGUID, administrator.entryUUID, "objectGUID is the GUID text");
      const bytes = (await admin.get(dn("Administrator"), {
        attributes: ["objectSid"],
        binaryAttributes: ["objectSid"],
      }))!.attributes.objectSid![0] as Buffer;
      t.equal(sidText(bytes), administratorSid, "the same bytes the DC keeps");

      // A filter on the SID's text form finds the account, as AD itself would.
      const found = await get(
        `/api/entries/users?filter=${encodeURIComponent(`(objectSid=${administratorSid})`)}&${fields}`,
      );
      t.same(
        found.body.nodes.map((node: { sAMAccountName: string }) => node.sAMAccountName),
        ["Administrator"],
      );
      const other = `${administratorSid!.slice(0, -"500".length)}501`;
      const guest = await get(
        `/api/entries/users?filter=${encodeURIComponent(`(objectSid=${other})`)}&${fields}`,
      );
      t.same(
        guest.body.nodes.map((node: { sAMAccountName: string }) => node.sAMAccountName),
        ["Guest"],
        "-501 is the Guest",
      );
      // Every account's SID is the domain's with its own RID.
      const everyone = await get(`/api/entries/users?${fields}&limit=100`);
      const domain = administratorSid!.slice(0, administratorSid!.lastIndexOf("-"));
      for (const node of everyone.body.nodes) {
        t.match(node.objectSid, new RegExp(`^${domain}-\\d+$`), node.sAMAccountName);
      }
    });

    t.test("GraphQL: the same, from the projections and from the directory", async (t) => {
      const answer = await graphql(
        `
          query ($sid: String) {
            user(q: "Administrator") {
              objectSid
              objectGUID
            }
            users(where: { objectSid: { eq: $sid } }) {
              nodes {
                sAMAccountName
              }
            }
          }
        `,
        { sid: administratorSid },
      );
      t.notOk(answer.errors, JSON.stringify(answer.errors));
      const user = answer.data!.user;
      t.equal(user.objectSid, administratorSid);
      t.match(user.objectGUID, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      t.same(
        answer.data!.users.nodes,
        [{ sAMAccountName: "Administrator" }],
        "where on the SID text",
      );
      // Read from the directory rather than the projections ([graphql] reads, a field's
      // reads: DIRECTORY), the values are shown alike: asked as bytes, never decoded as UTF-8.
      const schema = await loadDirectorySchema(admin);
      t.equal(schema.shownAs("objectSid"), "sid");
      t.equal(schema.shownAs("tokenGroups"), "sid");
      t.equal(schema.shownAs("sIDHistory"), "sid");
      t.equal(schema.shownAs("objectGUID"), "guid");
      const live = shownValuesDirectory(admin, schema);
      const entry = await live.get(dn("Administrator"), {
        attributes: ["objectSid", "objectGUID"],
      });
      t.same(entry!.attributes.objectSid, [administratorSid]);
      t.same(entry!.attributes.objectGUID, [user.objectGUID]);
      const asked = await live.get(dn("Administrator"), {
        attributes: ["objectSid"],
        binaryAttributes: ["objectSid"],
      });
      t.equal(
        sidText(asked!.attributes.objectSid![0] as Buffer),
        administratorSid,
        "bytes as asked",
      );
    });

    t.test("access granted to a group reaches a person three groups down", async (t) => {
      const directory = createDirectoryClient({
        url: dc.url,
        bindDN: dc.bindDN,
        password: dc.password,
        tls,
      });
      t.teardown(() => directory.close());
      t.equal(await isActiveDirectory(directory), true, "the root DSE says AD");
      const found = await directoryGroupsOf(directory, dc.base, dn("ada"), 7000);
      t.equal(found.inChain, true, "AD answered with LDAP_MATCHING_RULE_IN_CHAIN");
      t.same(
        found.groups,
        ["annal-readers", "department", "division", "team"].map((cn) => normalizeDN(dn(cn))).sort(),
      );

      const signIn = async (login: string) => {
        const browser = new Browserless();
        const answer = await browser.request(`${annal.url}/auth/login/ldap`, {
          method: "POST",
          body: form({ login, password: PASSWORD, returnTo: "/auth/session" }),
          headers: { "content-type": "application/x-www-form-urlencoded", origin: annal.url! },
        });
        t.equal(answer.status, 303, `${login} signs in`);
        return {
          cookie: `service_session=${browser.cookie(new URL(annal.url!).host, "service_session")}`,
        };
      };
      const authInfo = async (session: { cookie: string }) => {
        const viewer = await fetch(`${annal.url}/graphql`, {
          method: "POST",
          headers: { ...session, "content-type": "application/json", origin: annal.url! },
          body: JSON.stringify({
            query: "{ viewer { authInfo { person { name dn } principals access } } }",
          }),
        });
        return (await viewer.json()) as Answer;
      };
      const ada = await signIn("ada");
      const { data } = await authInfo(ada);
      t.same(data!.viewer.authInfo.access, ["read"], "read, through team, department and division");
      t.ok(data!.viewer.authInfo.principals.includes(normalizeDN(dn("annal-readers"))));
      t.equal((await get("/api/entries/users?limit=1", ada)).status, 200, "ada reads");
      const bob = await signIn("bob");
      t.equal(
        (await get("/api/entries/users?limit=1", bob)).status,
        403,
        "bob, in no group, does not",
      );
      // The demo's other access functions, granted to AD groups, reach cy two groups down.
      const cy = await signIn("cy");
      const cyInfo = (await authInfo(cy)).data!.viewer.authInfo;
      t.same(
        [...cyInfo.access].sort(),
        ["auditor", "export", "operator", "write"],
        "write, export and operator through annal-operators, auditor through annal-auditors",
      );
      t.ok(cyInfo.principals.includes(normalizeDN(dn("annal-auditors"))));
      t.equal(
        (await get("/api/entries/users?limit=1", cy)).status,
        403,
        "and not read, granted to no group of cy's",
      );
    });
  },
);
