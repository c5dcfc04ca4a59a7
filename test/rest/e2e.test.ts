import { parse as parseCsv } from "csv-parse/sync";
import ldif from "ldif";
import { pino } from "pino";
import t from "tap";
import { Validator } from "@seriousme/openapi-schema-validator";
import { createToken } from "../../src/auth/index.ts";
import { loadDirectorySchema } from "../../src/directory/schema.ts";
import { createServer } from "../../src/http/index.ts";
import { restPlugin } from "../../src/rest/index.ts";
import { captureFixture } from "../support/capture.ts";
import { nextSecond } from "../support/clock.ts";
import { testConfig } from "./fixtures/harness.ts";
import { createAuthentication } from "../../src/auth/index.ts";

t.setTimeout(300_000);

const PEOPLE = "ou=people,dc=example,dc=org";
const ALICE = `uid=alice,${PEOPLE}`;
const JPEG = Buffer.from("ffd8ffe000104a46494600010100000100010000ffd9", "hex");
const q = encodeURIComponent;

t.test(
  "changes made in a real slapd are read back through HTTP: history, moments, exports",
  async (t) => {
    const f = await captureFixture(t);
    await f.sync(); // the first start imports the seed
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
    const { token } = await createToken(f.db.pool, f.store, {
      name: "e2e",
      access: ["read", "export"],
    });
    const get = (url: string, headers: Record<string, string> = {}) =>
      app.inject({ method: "GET", url, headers: { authorization: `Bearer ${token}`, ...headers } });

    await f.directory.add(ALICE, {
      objectClass: ["inetOrgPerson"],
      uid: "alice",
      cn: "Alice Liddell",
      sn: "Liddell",
      mail: "alice@old.example.org",
      jpegPhoto: JPEG,
      userPassword: "first secret",
    });
    await f.directory.add(`uid=bob,${PEOPLE}`, {
      objectClass: ["inetOrgPerson"],
      uid: "bob",
      cn: "Bob Builder",
      sn: "Builder",
      description: 'Ümlaut, comma "and" quotes',
    });
    await f.sync();
    // slapd stamps changes with whole seconds: the moment asked about below lies in a later
    // second than the adds, and the changes in a later second than it.
    const beforeChanges = await nextSecond();
    await nextSecond(beforeChanges);
    await f.directory.modify(
      ALICE,
      [{ operation: "replace", attribute: "mail", values: "alice@example.org" }],
      { as: `uid=bob,${PEOPLE}` },
    );
    await f.directory.modify(ALICE, [
      { operation: "replace", attribute: "userPassword", values: "second secret" },
    ]);
    await f.directory.modifyDN(ALICE, "uid=alice.liddell");
    await f.directory.delete(`uid=bob,${PEOPLE}`);
    await f.sync();

    // Search and lookup now.
    const users = (await get("/api/entries/users?fields=cn,mail,jpegPhoto,%2B")).json();
    t.equal(users.nodes.length, 1);
    const alice = users.nodes[0];
    t.equal(alice.dn, `uid=alice.liddell,${PEOPLE}`);
    t.same(alice.mail, ["alice@example.org"]);
    t.same(alice.jpegPhoto, [JPEG.toString("base64")], "binary as base64");
    t.match(
      alice.modifyTimestamp,
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
      "generalized time as ISO 8601",
    );
    t.equal(alice.entryUUID, alice.entryUUID.toLowerCase());
    const byDn = await get(`/api/entries/users/${q(`uid=alice.liddell,${PEOPLE}`)}`);
    t.equal(byDn.statusCode, 200);
    t.notMatch(JSON.stringify(byDn.json()), /secret/, "the password is never served");

    // The entry as it was before the changes, by its old DN.
    const then = await get(`/api/entries/users/${q(ALICE)}?at=${q(beforeChanges.toISOString())}`);
    t.equal(then.statusCode, 200, then.body);
    t.match(then.json(), {
      dn: ALICE,
      mail: ["alice@old.example.org"],
      entryUUID: alice.entryUUID,
    });
    const gone = (await get(`/api/entries/users/${q(`uid=bob,${PEOPLE}`)}/changes`)).json();
    t.same(
      gone.nodes.map((c: { type: string }) => c.type),
      ["add", "delete"],
      "a deleted entry's history",
    );
    const bobThen = await get(
      `/api/entries/users/${gone.nodes[0].entryUUID}?at=${q(beforeChanges.toISOString())}`,
    );
    t.same(bobThen.json().description, ['Ümlaut, comma "and" quotes']);
    const bobNow = await get(`/api/entries/users/${gone.nodes[0].entryUUID}`);
    t.match(bobNow.json(), { status: 404, reason: "deleted" });

    // The feed: who changed what.
    const history = (
      await get(`/api/entries/users/${alice.entryUUID}/changes?include=nodes,patch,count`)
    ).json();
    t.equal(history.count, 4);
    t.same(
      history.nodes.map((c: { type: string }) => c.type),
      ["add", "modify", "modify", "modrdn"],
    );
    const [, modify, password, rename] = history.nodes;
    t.equal(modify.actor, `uid=bob,${PEOPLE}`, "the proxied identity is the actor");
    t.same(modify.attributes, ["mail"]);
    t.same(modify.patch, [{ op: "replace", path: "/mail/0", value: "alice@example.org" }]);
    t.equal(password.actor, f.slapd.bindDN);
    t.same(password.attributes, ["userPassword"], "the password change, by name");
    t.same(password.patch, []);
    t.notMatch(JSON.stringify(history), /secret/, "its value never");
    t.match(rename, { oldDn: ALICE, dn: `uid=alice.liddell,${PEOPLE}` });
    const mailChanges = (
      await get(`/api/changes?affects=mail&since=${q(beforeChanges.toISOString())}`)
    ).json();
    t.equal(mailChanges.nodes.length, 1);

    // Exports of the real entries parse back to the search results.
    await f.directory.add(`uid=carol,${PEOPLE}`, {
      objectClass: ["inetOrgPerson"],
      uid: "carol",
      cn: ["Carol Meyer", "Carol"],
      sn: "Meyer",
    });
    await f.sync();
    const fields = "cn,sn,mail,jpegPhoto";
    const search = (await get(`/api/entries/users?sort=uid&fields=${fields}`)).json()
      .nodes as Record<string, unknown>[];
    const csv = parseCsv(
      (await get(`/api/entries/users?sort=uid&fields=${fields}&filename=users.csv`)).body,
    ) as string[][];
    t.same(
      csv.slice(1),
      search.map((node) =>
        ["entryUUID", "dn", ...fields.split(",")].map((name) => {
          const value = node[name];
          return value === null ? "" : Array.isArray(value) ? value.join("|") : String(value);
        }),
      ),
    );
    const records = ldif.parse(
      (await get(`/api/entries/users?sort=uid&fields=cn,sn,mail&filename=users.ldif`)).body,
    );
    const parsed = [];
    for (let record = records.shift(); record; record = records.shift())
      parsed.push(record.toObject({ flatten: false }));
    t.same(
      parsed,
      search.map((node) => ({
        dn: node.dn,
        attributes: Object.fromEntries(
          ["cn", "sn", "mail"].filter((n) => node[n] !== null).map((n) => [n, node[n]]),
        ),
      })),
    );
    const ndjson = (await get(`/api/entries/users?sort=uid&fields=${fields}&filename=users.ndjson`))
      .body;
    t.same(
      ndjson
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line)),
      search,
    );

    // The description from the real schema is valid.
    const document = (await app.inject({ method: "GET", url: "/api.json" })).json();
    t.ok((await new Validator().validate(structuredClone(document))).valid);
    t.match(document.components.schemas.Entry_user.properties.jpegPhoto.items, {
      contentEncoding: "base64",
    });
    t.match(document.components.schemas.Entry_user.properties.displayName, {
      oneOf: [{ type: "string" }, { type: "null" }],
    });
  },
);
