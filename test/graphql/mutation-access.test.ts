import t from "tap";
import { startGateway, GROUPS, PEOPLE } from "../support/graphql-gateway.ts";

// What a mutation may touch and what it answers: entries of its type only, and the answer
// read with the caller's read access.
const gateway = await startGateway(t);
const OWOJCIK = `uid=owojcik,ou=engineering,${PEOPLE}`;
const ON_CALL = `cn=on-call,${GROUPS}`;
const ENGINEERING = `ou=engineering,${PEOPLE}`;

async function title(dn: string): Promise<unknown> {
  return (await gateway.directory!.get(dn, { attributes: ["title"] }))?.attributes.title;
}

t.test("without read, a mutation's answer may select only what identifies the entry", async (t) => {
  const before = await title(OWOJCIK);
  const writes = gateway.writes.length;
  for (const [selection = "", fragments = ""] of [
    ["{ groups { members { nodes { uid } } } }"],
    ["{ dn uid }"],
    ["{ dn ... on Person { mail } }"],
    ["{ ...who }", "fragment who on Person { manager { uid } }"],
  ]) {
    const { body } = await gateway.query(
      `mutation($dn: DN) { updatePerson(dn: $dn, input: [{ operation: replace, changes: { title: "Spy" } }]) ${selection} } ${fragments}`,
      { dn: OWOJCIK },
      { token: gateway.tokens.write },
    );
    t.same(body.data, { updatePerson: null }, selection);
    t.match(body.errors, [
      { extensions: { code: "FORBIDDEN", annalCode: "ANNAL_FORBIDDEN", hint: /id or dn/ } },
    ]);
  }
  t.same(await title(OWOJCIK), before, "nothing was written");
  t.equal(gateway.writes.length, writes);

  const allowed = await gateway.query(
    `mutation($dn: DN) { updatePerson(dn: $dn, input: [{ operation: replace, changes: { title: "Written" } }]) { __typename dn id } }`,
    { dn: OWOJCIK },
    { token: gateway.tokens.write },
  );
  t.match(allowed.body, {
    data: { updatePerson: { __typename: "Person", dn: OWOJCIK, id: String } },
  });
  t.equal(allowed.body.errors, undefined);
  t.same(await title(OWOJCIK), ["Written"]);

  // With read as well, the answer is read like any query's.
  const both = await gateway.query(
    `mutation($dn: DN) { updatePerson(dn: $dn, input: [{ operation: replace, changes: { title: "Both" } }]) { uid groups { cn } } }`,
    { dn: OWOJCIK },
    { token: gateway.tokens.both },
  );
  t.match(both.body.data, { updatePerson: { uid: "owojcik", groups: Array } });
});

t.test("typed mutations touch only entries of their type: any other DN is NOT_FOUND", async (t) => {
  const cases = [
    `mutation { deletePerson(dn: "${ON_CALL}") }`,
    `mutation { updatePerson(dn: "${ON_CALL}", input: [{ operation: replace, changes: { title: "x" } }]) { dn } }`,
    `mutation { movePerson(dn: "${ON_CALL}", rdn: "cn=moved") { dn } }`,
    // Below the people's base, but a department, not a person.
    `mutation { updatePerson(dn: "${ENGINEERING}", input: [{ operation: replace, changes: { title: "x" } }]) { dn } }`,
    `mutation { deletePerson(dn: "uid=nobody,${PEOPLE}") }`,
  ];
  const writes = gateway.writes.length;
  for (const mutation of cases) {
    const { body } = await gateway.query(mutation);
    t.match(body.errors, [{ extensions: { code: "NOT_FOUND" } }], mutation);
  }
  t.equal(gateway.writes.length, writes, "nothing was written");
  t.ok(await gateway.directory!.get(ON_CALL), "the group is still there");
  t.ok(await gateway.directory!.get(ENGINEERING), "the department is still there");

  // The group by its internal id: the same refusal.
  const group = await gateway.query(`{ group(q: "on-call") { dn id } }`);
  t.match(group.body.data, { group: { dn: ON_CALL, id: String } });
  const { id } = (group.body.data as { group: { id: string } }).group;
  const byId = await gateway.query(`mutation($id: ID) { deletePerson(id: $id) }`, { id });
  t.match(byId.body.errors, [{ extensions: { code: "NOT_FOUND" } }]);
  t.ok(await gateway.directory!.get(ON_CALL));
});

t.test(
  "an unpaired surrogate in a mutation value is BAD_USER_INPUT; nothing is written",
  async (t) => {
    const writes = gateway.writes.length;
    const before = await title(OWOJCIK);
    for (const value of ["\uD800", "a\uDC00b", "\uDBFF!"]) {
      const update = await gateway.query(
        `mutation($dn: DN, $title: String) { updatePerson(dn: $dn, input: [{ operation: replace, changes: { title: $title } }]) { dn } }`,
        { dn: OWOJCIK, title: value },
      );
      t.match(update.body.errors, [
        { extensions: { code: "BAD_USER_INPUT", hint: /unpaired UTF-16 surrogate/ } },
      ]);
      const create = await gateway.query(
        `mutation($input: PersonInput!) { createPerson(rdn: "uid=lone", input: $input) { dn } }`,
        { input: { cn: "Lone", sn: value } },
      );
      t.match(create.body.errors, [{ extensions: { code: "BAD_USER_INPUT" } }]);
    }
    t.equal(gateway.writes.length, writes);
    t.same(await title(OWOJCIK), before);
    t.equal(await gateway.directory!.get(`uid=lone,${PEOPLE}`), undefined);
  },
);
