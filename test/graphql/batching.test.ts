import t from "tap";
import { sampleEntries, sampleLdif } from "../../src/demo/index.ts";
import { type LdifEntry, toLdif } from "../../src/slapd/index.ts";
import { startGateway, GROUPS } from "../support/graphql-gateway.ts";

// 50 more groups of 10 to 40 people each, on top of the demo organisation.
const people = sampleEntries()
  .filter((entry) => entry.attributes.objectClass?.includes("inetOrgPerson"))
  .map((entry) => entry.dn);
const extra: LdifEntry[] = Array.from({ length: 50 }, (_, i) => ({
  dn: `cn=team-${String(i).padStart(2, "0")},${GROUPS}`,
  attributes: {
    objectClass: ["groupOfNames"],
    cn: [`team-${String(i).padStart(2, "0")}`],
    member: people.slice((i * 5) % 260, ((i * 5) % 260) + 10 + (i % 31)),
  },
}));
const gateway = await startGateway(t, { seedLdif: `${sampleLdif()}\n${toLdif(extra)}` });

t.test("the members of 50 groups cost a bounded number of LDAP round trips", async (t) => {
  gateway.trips.reset();
  const { body } = await gateway.query(
    `{ groups(first: 50, q: null) { nodes { cn memberList { uid mail manager { uid } } } } }`,
  );
  t.notOk(body.errors);
  const groups = (body.data as { groups: { nodes: { memberList: unknown[] }[] } }).groups.nodes;
  t.equal(groups.length, 50);
  const members = groups.reduce((sum, group) => sum + group.memberList.length, 0);
  t.ok(members > 500, `${members} members resolved`);
  // One search for the groups; one per parent DN (four departments) for the members, in
  // chunks of 100 values; the managers are already read. Never one per member.
  t.ok(
    gateway.trips.total <= 12,
    `${gateway.trips.total} round trips (${gateway.trips.searches} searches)`,
  );
  t.equal(gateway.trips.gets, 0, "no base search per DN");
});

t.test("@resolveDnConnection pages of many groups are batched the same way", async (t) => {
  gateway.trips.reset();
  const { body } = await gateway.query(
    `{ groups(first: 50) { nodes { members(first: 20) { nodes { uid } } } } }`,
  );
  t.notOk(body.errors);
  t.ok(gateway.trips.total <= 12, `${gateway.trips.total} round trips`);
});

t.test(
  "lookups by attribute are batched into one search per base, filter and attribute",
  async (t) => {
    gateway.trips.reset();
    const { body } = await gateway.query(
      `{ people(first: 100) { nodes { uid groups { cn } department { ou } } } }`,
    );
    t.notOk(body.errors);
    // people; groups by member (one OR of 100 DNs); departments by ou (one OR of 4 values)
    t.equal(gateway.trips.searches, 3);
  },
);

/** Every group of the seed, by cn: its members' DNs, lower-case. */
const membersByGroup = new Map(
  [...sampleEntries(), ...extra]
    .filter((entry) => entry.attributes.objectClass?.includes("groupOfNames"))
    .map((entry) => [
      String(entry.attributes.cn![0]),
      (entry.attributes.member ?? []).map((dn) => String(dn).toLowerCase()),
    ]),
);
const dnByUid = new Map(
  sampleEntries()
    .filter((entry) => entry.attributes.objectClass?.includes("inetOrgPerson"))
    .map((entry) => [String(entry.attributes.uid![0]), entry.dn.toLowerCase()]),
);
const groupsOf = (uid: string) =>
  [...membersByGroup]
    .filter(([, members]) => members.includes(dnByUid.get(uid)!))
    .map(([cn]) => cn)
    .sort();

type PeopleWithGroups = {
  people: { nodes: { uid: string; groups: { cn: string; memberList?: { uid: string }[] }[] }[] };
};

t.test(
  "a lookup by member brings, of each group it finds, only the members it asked about",
  async (t) => {
    gateway.trips.reset();
    const { body } = await gateway.query(`{ people(first: 100) { nodes { uid groups { cn } } } }`);
    t.notOk(body.errors);
    const nodes = (body.data as PeopleWithGroups).people.nodes;
    t.equal(nodes.length, 100);
    for (const person of nodes) {
      t.same(person.groups.map((group) => group.cn).sort(), groupsOf(person.uid), person.uid);
    }
    const asked = new Set(nodes.map((person) => dnByUid.get(person.uid)!));
    const groups = gateway.trips.found.filter((entry) => entry.dn.endsWith(GROUPS));
    t.ok(groups.length > 10, `${groups.length} groups found`);
    const sent = groups.flatMap((group) =>
      (group.attributes.member ?? []).map((dn) => String(dn).toLowerCase()),
    );
    t.same(
      sent.filter((dn) => !asked.has(dn)),
      [],
      "every member the directory sent is one of the people asked about",
    );
    const all = groups.reduce(
      (sum, group) => sum + membersByGroup.get(group.dn.split(/[=,]/)[1]!)!.length,
      0,
    );
    t.ok(sent.length < all, `${sent.length} member values sent of the groups' ${all}`);
    t.ok(
      groups.every((group) => group.attributes.cn !== undefined),
      "the attributes the request reads come whole",
    );
  },
);

t.test("a request that also selects the members reads the groups' members whole", async (t) => {
  const { body } = await gateway.query(
    `{ people(first: 40) { nodes { uid groups { cn memberList { uid } } } } }`,
  );
  t.notOk(body.errors, JSON.stringify(body.errors));
  const nodes = (body.data as PeopleWithGroups).people.nodes;
  const checked = new Set<string>();
  for (const person of nodes) {
    t.same(person.groups.map((group) => group.cn).sort(), groupsOf(person.uid), person.uid);
    for (const group of person.groups) {
      if (checked.has(group.cn)) continue;
      checked.add(group.cn);
      t.equal(
        group.memberList!.length,
        membersByGroup.get(group.cn)!.length,
        `every member of ${group.cn}`,
      );
    }
  }
});

t.test("a request caches what it read: the same entry twice is read once", async (t) => {
  gateway.trips.reset();
  const dn = people[1]!;
  const { body } = await gateway.query(
    `query($dn: DN!) { a: personByDn(dn: $dn) { uid } b: personByDn(dn: $dn) { uid manager { uid } } }`,
    {
      dn,
    },
  );
  t.notOk(body.errors);
  t.equal(gateway.trips.searches, 2, "the person, then the manager");
});
