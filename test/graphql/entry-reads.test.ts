import t from "tap";
import { startGateway, PEOPLE } from "../support/graphql-gateway.ts";

// A request reads entries with the attributes its query's fields need, not every attribute
// the schema names; the answers are the same.
const gateway = await startGateway(t);
const OLGA = `uid=owojcik,ou=engineering,${PEOPLE}`;
const PHOTO = `uid=jmuller,ou=engineering,${PEOPLE}`; // has a jpegPhoto

async function data(source: string, variables?: Record<string, unknown>, token?: string) {
  const { status, body } = await gateway.query(source, variables, { token });
  if (status !== 200 || body.errors) throw new Error(`${status} ${JSON.stringify(body.errors)}`);
  return body.data as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Every attribute the directory was asked for since the last reset, in lower case. */
function askedFor(): Set<string> {
  return new Set(
    gateway.trips.reads.flatMap((read) => read.attributes.map((name) => name.toLowerCase())),
  );
}

t.test("a page of people with their groups reads only the attributes it selects", async (t) => {
  gateway.trips.reset();
  const { people } = await data(
    `{ people(first: 100) { nodes { uid displayName mail title telephoneNumbers groups { cn } } } }`,
  );
  t.equal(people.nodes.length, 100);
  const olga = people.nodes.find((person: { uid: string }) => person.uid === "owojcik");
  t.equal(olga.displayName, "Olga Wójcik");
  t.ok(olga.groups.length > 0, "her groups, matched by member");
  const asked = askedFor();
  for (const name of ["uid", "displayname", "cn", "mail", "title", "telephonenumber", "member"]) {
    t.ok(asked.has(name), `${name} is read`);
  }
  // With the type, the identity `[directory] identity = "auto"` may be: each entry's `@id`.
  for (const name of ["objectclass", "entryuuid", "nsuniqueid", "objectguid"]) {
    t.ok(asked.has(name), `${name} always`);
  }
  for (const name of ["jpegphoto", "description", "manager", "createtimestamp"]) {
    t.notOk(asked.has(name), `${name} is not read`);
  }
  t.same(
    gateway.trips.reads.map((read) => read.binaryAttributes),
    gateway.trips.reads.map(() => ["objectGUID"]),
    "nothing as bytes but an identity that may be AD's objectGUID",
  );
});

t.test(
  "a binary attribute is read, as bytes, when a field that needs it is selected",
  async (t) => {
    gateway.trips.reset();
    const { personByDn } = await data(`query($dn: DN!) { personByDn(dn: $dn) { photoBytes } }`, {
      dn: PHOTO,
    });
    const bytes = Buffer.from(personByDn.photoBytes, "base64");
    t.same([bytes[0], bytes[1]], [0xff, 0xd8], "a JPEG, byte for byte");
    t.ok(gateway.trips.reads.some((read) => read.binaryAttributes.includes("jpegPhoto")));
  },
);

t.test("a field of an interface reads what each implementing type's field needs", async (t) => {
  gateway.trips.reset();
  const { entry } = await data(`query($dn: DN!) { entry(dn: $dn) { ... on Labeled { label } } }`, {
    dn: OLGA,
  });
  t.same(entry, { label: "Olga Wójcik" });
  t.ok(askedFor().has("displayname"));
});

t.test("fields that resolve other fields read every attribute the schema names", async (t) => {
  gateway.trips.reset();
  const { personByDn: alias } = await data(`query($dn: DN!) { personByDn(dn: $dn) { email } }`, {
    dn: OLGA,
  });
  t.equal(alias.email, "owojcik@example.org", '@alias(path: "mail")');
  t.ok(askedFor().has("jpegphoto"), "@alias: every attribute");

  gateway.trips.reset();
  const { personByDn: fieldset } = await data(
    `query($dn: DN!) { personByDn(dn: $dn) { contact { fields { name value } } } }`,
    { dn: OLGA },
  );
  const fields = new Map(
    fieldset.contact.fields.map((field: { name: string; value: unknown }) => [
      field.name,
      field.value,
    ]),
  );
  t.equal(fields.get("mail"), "owojcik@example.org", "@fieldset");
  t.equal(fields.get("manager"), "Priya Rossi", "a Labeled field's label, of another entry");
  t.ok(askedFor().has("jpegphoto"), "@fieldset: every attribute");
});

t.test("a mutation reads every attribute the schema names", async (t) => {
  gateway.trips.reset();
  const { updatePerson } = await data(
    `mutation($dn: DN) { updatePerson(dn: $dn, input: [{ operation: replace, changes: { title: "Lead" } }]) { title } }`,
    { dn: OLGA },
    gateway.tokens.both,
  );
  t.same(updatePerson, { title: "Lead" });
  t.ok(askedFor().has("jpegphoto"));
});
