import t from "tap";
import { startGateway, PEOPLE } from "../support/graphql-gateway.ts";

// Every directive of the example gateway schema (ops/demo/gateway), alone and chained, over
// the demo organisation in a private slapd.
const gateway = await startGateway(t);
const OLGA = `uid=owojcik,ou=engineering,${PEOPLE}`; // reports to Priya
const PHOTO = `uid=jmuller,ou=engineering,${PEOPLE}`; // has a jpegPhoto

async function data(
  source: string,
  variables?: Record<string, unknown>,
  headers?: Record<string, string>,
) {
  const { status, body } = await gateway.query(source, variables, { headers });
  if (status !== 200 || body.errors) throw new Error(`${status} ${JSON.stringify(body.errors)}`);
  return body.data as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

t.test("@ldapField reads attributes, with fallbacks, dn, lists and numbers", async (t) => {
  const { personByDn: olga } = await data(
    `query($dn: DN!) { personByDn(dn: $dn) { dn uid displayName mail employeeNumber telephoneNumbers memberless: mobile } }`,
    { dn: OLGA },
  );
  t.equal(olga.dn, OLGA);
  t.equal(olga.uid, "owojcik");
  t.equal(olga.displayName, "Olga Wójcik");
  t.equal(olga.mail, "owojcik@example.org");
  t.type(olga.employeeNumber, "number");
  t.same(olga.memberless, []);
  t.equal(olga.telephoneNumbers.length, 1);
});

t.test("@ldapField falls back to later attributes when the first has no value", async (t) => {
  await gateway.directory!.modify(OLGA, [{ operation: "delete", attribute: "displayName" }]);
  t.teardown(() =>
    gateway.directory!.modify(OLGA, [
      { operation: "add", attribute: "displayName", values: "Olga Wójcik" },
    ]),
  );
  const { personByDn } = await data(
    `query($dn: DN!) { personByDn(dn: $dn) { displayName label } }`,
    { dn: OLGA },
  );
  t.same(personByDn, { displayName: "Olga Wójcik", label: "Olga Wójcik" }, "from cn");
});

t.test("@alias returns another field of the same object", async (t) => {
  const { personByDn } = await data(`query($dn: DN!) { personByDn(dn: $dn) { mail email } }`, {
    dn: OLGA,
  });
  t.equal(personByDn.email, personByDn.mail);
});

t.test("@ensureArray and @ensureBoolean", async (t) => {
  const { personByDn, departments } = await data(
    `query($dn: DN!) { personByDn(dn: $dn) { telephoneNumbers mobile hasSubordinates } departments { nodes { ou hasSubordinates } } }`,
    { dn: OLGA },
  );
  t.ok(Array.isArray(personByDn.telephoneNumbers));
  t.same(personByDn.mobile, []);
  t.equal(personByDn.hasSubordinates, false, "a person has no entries below it (FALSE)");
  t.ok(
    departments.nodes.every((d: { hasSubordinates: boolean }) => d.hasSubordinates === true),
    "TRUE",
  );
});

t.test(
  "@id builds base64 of type and value, and @ldapFindById finds the entry again",
  async (t) => {
    const { personByDn } = await data(
      `query($dn: DN!) { personByDn(dn: $dn) { id employeeNumber employeeId } }`,
      {
        dn: OLGA,
      },
    );
    const [type, uuid] = Buffer.from(personByDn.id, "base64").toString("utf8").split(":");
    t.equal(type, "Person");
    t.match(uuid, /^[0-9a-f-]{36}$/);
    t.equal(
      Buffer.from(personByDn.employeeId, "base64").toString("utf8"),
      `Employee:${personByDn.employeeNumber}`,
      "@id(type) after @ldapField",
    );
    const found = await data(`query($id: ID!) { personById(id: $id) { dn } }`, {
      id: personByDn.id,
    });
    t.equal(found.personById.dn, OLGA);
    const byUuid = await data(`query($u: ID!) { personByEntryUUID(entryUUID: $u) { dn } }`, {
      u: uuid,
    });
    t.equal(byUuid.personByEntryUUID.dn, OLGA, "@ldapFindByEntryUuid");
    const group = Buffer.from(`Group:${uuid}`).toString("base64");
    t.same(
      await data(`query($id: ID!) { personById(id: $id) { dn } }`, { id: group }),
      { personById: null },
      "an ID of another type",
    );
  },
);

t.test("@localizeLdapAttribute follows locale, Accept-Language and the fallback", async (t) => {
  const q = `query($dn: DN!, $l: String) { personByDn(dn: $dn) { description(locale: $l) descriptionDe descriptionRaw } }`;
  const english = await data(q, { dn: OLGA });
  t.match(english.personByDn.description, /^QA Engineer, identity services team/, "fallback en");
  t.match(english.personByDn.descriptionDe, /^Testingenieurin/, "directive locale");
  t.match(english.personByDn.descriptionRaw, /^en~.*\|de~.*\|fr~/, "localize: false");
  const french = await data(q, { dn: OLGA }, { "accept-language": "fr-CH, de;q=0.5" });
  t.match(
    french.personByDn.description,
    /^Ingénieure qualité/,
    "Accept-Language, by primary language",
  );
  const argument = await data(q, { dn: OLGA, l: "de" }, { "accept-language": "fr" });
  t.match(argument.personByDn.description, /^Testingenieurin/, "the argument wins");
  const missing = await data(q, { dn: OLGA, l: "ja" });
  t.match(
    missing.personByDn.description,
    /^QA Engineer/,
    "a missing language yields the fallback's text",
  );
});

t.test(
  "@ldapTimestamp and @formatDateTime, with format and timeZone/timezone arguments",
  async (t) => {
    const { personByDn: p } = await data(
      `query($dn: DN!) { personByDn(dn: $dn) { modifiedAt createdAt berlin: createdAt(format: "yyyy-MM-dd HH:mm XXX", timeZone: "Europe/Berlin") tokyo: createdAt(format: "HH:mm", timezone: "Asia/Tokyo") } }`,
      { dn: OLGA },
    );
    t.match(p.modifiedAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/);
    t.match(p.createdAt, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    const created = new Date(p.modifiedAt);
    t.ok(created.getTime() > 0);
    t.match(p.berlin, /\+0[12]:00$/);
    t.match(p.tokyo, /^\d{2}:\d{2}$/);
    const bad = await gateway.query(
      `query($dn: DN!) { personByDn(dn: $dn) { createdAt(timeZone: "Mars/Olympus") } }`,
      { dn: OLGA },
    );
    t.equal(bad.body.errors?.[0]?.extensions.code, "BAD_USER_INPUT");
    t.equal(bad.body.errors?.[0]?.message, "Invalid timeZone");
  },
);

t.test("@buffer and @url encode binary attributes", async (t) => {
  const { personByDn: p } = await data(
    `query($dn: DN!) { personByDn(dn: $dn) { photo photoBytes hex: photoBytes(format: hex) } }`,
    { dn: PHOTO },
  );
  const bytes = Buffer.from(p.photoBytes, "base64");
  t.equal(bytes[0], 0xff, "a JPEG starts with FF D8");
  t.equal(bytes[1], 0xd8);
  t.equal(p.hex, bytes.toString("hex"), "format argument");
  t.equal(p.photo, `data:image/jpeg;base64,${p.photoBytes}`);
  const none = await data(`query($dn: DN!) { personByDn(dn: $dn) { photo photoBytes } }`, {
    dn: OLGA,
  });
  t.same(none.personByDn, { photo: null, photoBytes: null });
});

t.test("@resolveDn alone, after @ldapField, and chained twice", async (t) => {
  const { personByDn: p } = await data(
    `query($dn: DN!) { personByDn(dn: $dn) { manager { uid } managerByPath { uid } managerEntry { uid } managersManager { uid } } }`,
    { dn: OLGA },
  );
  t.same(p.manager, { uid: "prossi" });
  t.same(p.managerByPath, { uid: "prossi" });
  t.same(p.managerEntry, { uid: "prossi" }, "@ldapFindByDn(path)");
  t.same(p.managersManager, { uid: "hbrandt" }, "the head's manager: the managing director");
  const { group } = await data(`{ group(q: "managers") { memberList { uid } memberDns } }`);
  t.equal(group.memberList.length, 4, "a list field resolves every DN");
  t.equal(group.memberDns.length, 4);
});

t.test("@ldapFindByAttribute: one match for a single field, every match for a list", async (t) => {
  const { personByDn: p } = await data(
    `query($dn: DN!) { personByDn(dn: $dn) { department { ou } groups { cn } } }`,
    {
      dn: OLGA,
    },
  );
  t.same(p.department, { ou: "engineering" });
  t.ok(p.groups.some((g: { cn: string }) => g.cn === "engineering"));
});

t.test(
  "@ldapFindByDn from an argument, a static dn, and a union told by objectClass",
  async (t) => {
    const result = await data(
      `query($p: DN!, $g: DN!, $d: DN!) {
      admins { cn }
      person: entry(dn: $p) { __typename ... on Person { uid } }
      group: entry(dn: $g) { __typename ... on Group { cn } }
      department: entry(dn: $d) { __typename ... on Department { ou } }
      missing: entry(dn: "uid=nobody,ou=people,dc=example,dc=org") { __typename }
    }`,
      { p: OLGA, g: "cn=vpn-users,ou=groups,dc=example,dc=org", d: `ou=sales,${PEOPLE}` },
    );
    t.same(result.admins, { cn: "annal-admins" });
    t.same(result.person, { __typename: "Person", uid: "owojcik" });
    t.same(result.group, { __typename: "Group", cn: "vpn-users" });
    t.same(result.department, { __typename: "Department", ou: "sales" });
    t.equal(result.missing, null);
  },
);

t.test("@ldapFind answers only when exactly one entry matches; disablePaging too", async (t) => {
  gateway.trips.reset();
  const r = await data(
    `{ one: person(q: "owojcik") { uid } none: person(q: "nobody") { uid } several: person(where: { department: { eq: "Sales" } }) { uid }
       unpaged: personUnpaged(q: "owojcik@example.org") { uid } group(q: "on-call") { cn }
       departments { nodes { ou head { title } } } }`,
  );
  t.same(r.one, { uid: "owojcik" });
  t.equal(r.none, null);
  t.equal(gateway.trips.unpaged, 1, "personUnpaged searched without the paged-results control");
  t.equal(r.several, null, "several matches: null");
  t.same(r.unpaged, { uid: "owojcik" });
  t.same(r.group, { cn: "on-call" });
  t.ok(
    r.departments.nodes.every(
      (d: { head: { title: string } }) => d.head.title === "Head of department",
    ),
    "base attribute:dn",
  );
});

t.test("@ldapSearch: nodes, paging with opaque cursors, where, by, q, totalCount", async (t) => {
  const first = await data(
    `{ people(first: 100) { nodes { uid } pageInfo { hasNextPage hasPreviousPage endCursor } totalCount } }`,
  );
  t.equal(first.people.nodes.length, 100);
  t.equal(first.people.totalCount, 301);
  t.equal(first.people.pageInfo.hasNextPage, true);
  t.equal(first.people.pageInfo.hasPreviousPage, false);
  const uids = new Set(first.people.nodes.map((n: { uid: string }) => n.uid));
  let after = first.people.pageInfo.endCursor;
  for (let page = 0; page < 3; page++) {
    const next = await data(
      `query($after: String) { people(first: 100, after: $after) { nodes { uid } pageInfo { hasNextPage endCursor } } }`,
      {
        after,
      },
    );
    for (const n of next.people.nodes) uids.add(n.uid);
    after = next.people.pageInfo.endCursor;
    t.equal(next.people.pageInfo.hasNextPage, page < 2);
  }
  t.equal(uids.size, 301, "four pages hold every person once");

  const where = await data(
    `{ people(first: 100, where: { city: { eq: "Paris" }, department: { eq: "Sales" } }) { totalCount nodes { uid } } }`,
  );
  t.equal(where.people.totalCount, 19);
  const logical = await data(
    `{ people(first: 100, where: { _or_: [{ sn: { startsWith: "Mü" } }, { uid: { eq: "owojcik" } }], _not_: { uid: { eq: "jmuller" } } }) { nodes { uid } } }`,
  );
  const found = logical.people.nodes.map((n: { uid: string }) => n.uid).sort();
  t.same(found, [
    "cmuller",
    "emuller",
    "hmuller",
    "hmuller2",
    "jmuller2",
    "owojcik",
    "umuller",
    "vmuller",
  ]);
  const by = await data(
    `{ people(by: { cities: ["Paris", "London", "Berlin", "New York"], uid: "owojcik" }) { nodes { uid } } }`,
  );
  t.same(by.people.nodes, [{ uid: "owojcik" }]);
  const q = await data(`{ people(q: "Olga Wójcik") { nodes { uid } } }`);
  t.same(q.people.nodes, [{ uid: "owojcik" }], "q against cn");
  const nested = await data(
    `{ departments { totalCount nodes { ou people(first: 1) { totalCount } } } }`,
  );
  t.equal(nested.departments.totalCount, 4);
  t.same(
    nested.departments.nodes
      .map((d: { people: { totalCount: number } }) => d.people.totalCount)
      .sort(),
    [120, 45, 60, 75].sort(),
    "base attribute:dn, scope one",
  );
});

t.test("@resolveDnConnection with and without resolvedType", async (t) => {
  const r = await data(
    `{ group(q: "vpn-users") { members(first: 10) { nodes { uid } pageInfo { hasNextPage endCursor } totalCount }
       memberEntries(paging: { first: 5 }) { nodes { __typename ... on Person { uid } } } } }`,
  );
  t.equal(r.group.members.nodes.length, 10);
  t.equal(r.group.members.totalCount, 102);
  t.equal(r.group.members.pageInfo.hasNextPage, true);
  t.ok(
    r.group.memberEntries.nodes.every((n: { __typename: string }) => n.__typename === "Person"),
    "inferred",
  );
  const next = await data(
    `query($a: String) { group(q: "vpn-users") { members(first: 100, after: $a) { nodes { uid } pageInfo { hasNextPage } } } }`,
    {
      a: r.group.members.pageInfo.endCursor,
    },
  );
  t.equal(next.group.members.nodes.length, 92);
  t.equal(next.group.members.pageInfo.hasNextPage, false);
});

t.test(
  "@fieldset: labels and descriptions by the lookup order, locale, nesting, Labeled values",
  async (t) => {
    const q = `query($dn: DN!, $l: [String!]) { personByDn(dn: $dn) {
    contact(locale: $l) { label description fields { name label description type value } }
    profile(locale: $l) { label fields { name label value fieldset { label } } } } }`;
    const en = (await data(q, { dn: OLGA })).personByDn;
    t.equal(en.contact.label, "Contact", "<type>.<fieldset>.label");
    t.equal(en.contact.description, "How to reach this person");
    const fields = Object.fromEntries(en.contact.fields.map((f: { name: string }) => [f.name, f]));
    t.equal(fields.mail.label, "Email", "common namespace, <field>.label");
    t.equal(fields.mail.value, "owojcik@example.org");
    t.equal(fields.mail.description, null);
    t.equal(fields.telephoneNumbers.label, "Phone", "<type>.<field>.label");
    t.equal(fields.mobile.label, "Mobile", "<type>.<field>");
    t.equal(fields.manager.label, "Manager");
    t.equal(fields.manager.description, "The person this one reports to");
    t.equal(fields.manager.value, "Priya Rossi", "a Labeled value shows its label");
    t.equal(fields.manager.type, "Person");
    t.equal(en.profile.label, "Profile");
    const nested = en.profile.fields.find((f: { name: string }) => f.name === "contact");
    t.equal(nested.fieldset.label, "Contact", "a fieldset inside a fieldset");
    t.equal(en.profile.fields[0].label, "Name");

    const de = (await data(q, { dn: OLGA, l: ["de"] })).personByDn;
    t.equal(de.contact.label, "Kontakt");
    t.equal(de.contact.fields[0].label, "E-Mail");
    const header = (await data(q, { dn: OLGA }, { "accept-language": "de-AT" })).personByDn;
    t.equal(header.contact.label, "Kontakt", "Accept-Language");
    const unknown = (await data(q, { dn: OLGA, l: ["ja"] })).personByDn;
    t.equal(unknown.contact.label, "Contact", "the fallback language is always appended");
    const group = (
      await data(`{ group(q: "managers") { summary { label fields { name label value } } } }`)
    ).group;
    t.equal(group.summary.label, "Group", "<type>.<fieldset>");
    const members = group.summary.fields.find((f: { name: string }) => f.name === "memberList");
    t.equal(members.label, "Members", "<field>.label");
    t.equal(members.value.length, 4, "a list of Labeled values");
    t.equal(group.summary.fields[0].label, "Name");
  },
);
