import t from "tap";
import { captureOnce } from "../../src/capture/index.ts";
import { directoryGroupsOf } from "../../src/auth/index.ts";
import { guidText, normalizeDN, type DirectoryClient } from "../../src/directory/index.ts";
import type { EntryState } from "../../src/events/index.ts";
import { toLdif } from "../../src/slapd/index.ts";
import { directoryCaptureFixture } from "../support/capture.ts";
import { feed } from "../support/history.ts";
import { adGroup, adOrganizationalUnit, adUser, startSambaDC } from "../support/samba.ts";

/**
 * annal's import and poll capture in front of Active Directory: Samba's AD DC with its
 * default security (LDAPS only, verified against the DC's own CA and certificate name).
 */
const PEOPLE = "OU=People,DC=example,DC=test";
const ADA = `CN=ada,${PEOPLE}`;
const TEAM = `CN=team,${PEOPLE}`;
const TYPES = [
  { name: "user", base: PEOPLE, filter: "(objectClass=user)" },
  { name: "group", base: PEOPLE, filter: "(objectClass=group)" },
];

/** The client's searches under the base, counting the entries they return. */
function countingSearches(directory: DirectoryClient) {
  const counts = { entries: 0 };
  const counted = new Proxy(directory, {
    get(target, property) {
      if (property !== "search") return Reflect.get(target, property, target);
      return async function* (...args: Parameters<DirectoryClient["search"]>) {
        for await (const page of target.search(...args)) {
          counts.entries += page.length;
          yield page;
        }
      };
    },
  });
  return { counts, counted };
}

t.test(
  "AD: the import keys entries by objectGUID, types them by objectClass, keeps binary values whole; poll reads only what changed",
  async (t) => {
    const dc = await startSambaDC({
      seedLdif: toLdif([
        adOrganizationalUnit("People"),
        adUser("ada", { parent: PEOPLE, attributes: { givenName: ["Ada"], sn: ["Lovelace"] } }),
        adUser("bob", { parent: PEOPLE, attributes: { sn: ["Builder"] } }),
        adGroup("team", [ADA], { parent: PEOPLE }),
        adGroup("everyone", [TEAM], { parent: PEOPLE }),
      ]),
    });
    t.teardown(() => dc.stop());
    const f = await directoryCaptureFixture(t, {
      server: { ...dc, tls: { caFile: dc.caFile, serverName: dc.serverName } },
      source: "poll",
      types: TYPES,
    });
    await f.sync();

    const read = (await f.directory.get(ADA, { attributes: ["objectGUID", "objectSid"] }))!;
    const guid = read.attributes.objectGUID?.[0];
    const sid = read.attributes.objectSid?.[0];
    t.ok(Buffer.isBuffer(guid) && guid.length === 16, "objectGUID: 16 bytes");
    t.ok(Buffer.isBuffer(sid) && sid.length === 28, "objectSid: a user's 28 bytes");
    const identity = guidText(guid as Buffer)!;
    const snapshot = await f.db.pool.query<{ stream_id: string; data: { state: EntryState } }>(
      "SELECT stream_id, data FROM events WHERE type = 'EntrySnapshot' AND data->'state'->>'dn' = $1",
      [ADA],
    );
    t.equal(snapshot.rows[0]?.stream_id, `entry-${identity}`, "the stream is the GUID's text");
    const state = snapshot.rows[0]!.data.state;
    t.equal(state.type, "user", "typed by objectClass (AD marks it NO-USER-MODIFICATION)");
    const stored = { ...state.attributes, ...state.operational };
    t.equal(stored.objectSid?.[0], (sid as Buffer).toString("base64"), "objectSid, byte for byte");
    t.equal(stored.objectGUID?.[0], (guid as Buffer).toString("base64"), "objectGUID too");
    const team = await f.db.pool.query<{ type: string }>(
      "SELECT data->'state'->>'type' AS type FROM events WHERE type = 'EntrySnapshot' AND data->'state'->>'dn' = $1",
      [TEAM],
    );
    t.equal(team.rows[0]?.type, "group");

    // A person's groups for annal's principals, nested ones included (AD's member is a DN).
    const { groups } = await directoryGroupsOf(f.directory, dc.base, ADA, 7000);
    t.same(groups, [`cn=everyone,${PEOPLE}`, TEAM].map(normalizeDN).sort(), "through team");

    // A write, and a poll pass that reads what changed since its checkpoint, not the domain:
    // AD's modifyTimeStamp comes only by name, and its filter needs a fraction.
    await f.directory.modify(ADA, [
      { operation: "replace", attribute: "title", values: "Countess" },
    ]);
    const { counts, counted } = countingSearches(f.directory);
    const result = await captureOnce({ ...f.context, directory: counted }, "poll");
    t.equal(result.recorded, 1, "the modify is recorded");
    t.ok(counts.entries < 20, `the pass read ${counts.entries} entries, not the whole domain`);
    await f.sync();
    const changes = await feed(f.db.pool);
    t.match(changes.at(-1), { change_type: "modify", dn: ADA, actor: null, entry_uuid: identity });
    t.same(changes.at(-1)?.attributes, ["title"]);
  },
);
