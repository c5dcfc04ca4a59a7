import t from "tap";
import { eq, type DirectoryEntry } from "../../src/directory/index.ts";
import type { DirectoryWrite } from "../../src/graphql/index.ts";
import { startGateway, PEOPLE } from "../support/graphql-gateway.ts";
import { armPausePoint } from "../support/pause-points.ts";

// Mutations write as the caller (RFC 4370): slapd's accesslog, which capture reads, names them.
let pending = 0;
const announced: DirectoryWrite[] = [];
let refuse = false;
const REQ_TYPES = { add: "add", modify: "modify", modifyDN: "modrdn", delete: "delete" } as const;
const gateway = await startGateway(t, {
  beforeWrite: async (write) => {
    if (refuse) throw new Error("the cause could not be noted");
    announced.push(write);
  },
  afterWrite: async (write) => {
    // The app waits here for capture (which reads the accesslog) and the projections, so
    // this reads the write's accesslog record: work that takes a round trip to the directory.
    await accesslog(REQ_TYPES[write.operation], write.dn);
    pending++;
  },
});

async function accesslog(type: string, dn: string): Promise<DirectoryEntry[]> {
  const records: DirectoryEntry[] = [];
  for await (const page of gateway.directory!.search("cn=accesslog", {
    filter: eq("reqType", type),
    attributes: ["reqDN", "reqAuthzID", "reqMod"],
  })) {
    records.push(
      ...page.filter(
        (record) => String(record.attributes.reqDN).toLowerCase() === dn.toLowerCase(),
      ),
    );
  }
  return records;
}

const NEW = `uid=newbie,${PEOPLE}`;

t.test("@ldapAdd creates rdn + the type's base with the input's attributes", async (t) => {
  const before = pending;
  // Stop the mutation where it goes on to answer: afterWrite must have ended by then.
  const answering = armPausePoint(t, "graphql.mutation.written", { subject: NEW });
  let pendingAtAnswer: number | undefined;
  const answer = gateway
    .query(
      `mutation($input: PersonInput!) { createPerson(rdn: "uid=newbie", input: $input) { dn uid displayName mail telephoneNumbers title } }`,
      {
        input: {
          cn: "New Bie",
          sn: "Bie",
          mail: ["newbie@example.org"],
          phone: ["+49 30 1"],
          title: "Intern",
        },
      },
    )
    .then((response) => {
      pendingAtAnswer = pending;
      return response;
    });
  await answering.reached();
  t.equal(pending, before + 1, "afterWrite has ended before the mutation answers");
  answering.release();
  const { body } = await answer;
  t.notOk(body.errors);
  t.same((body.data as Record<string, unknown>).createPerson, {
    dn: NEW,
    uid: "newbie",
    displayName: "New Bie",
    mail: "newbie@example.org",
    telephoneNumbers: ["+49 30 1"],
    title: "Intern",
  });
  t.equal(pendingAtAnswer, before + 1, "the answer came after afterWrite finished");
  t.match(gateway.writes.at(-1), {
    operation: "add",
    dn: NEW,
    actor: "cn=editor,ou=service-accounts,dc=example,dc=org",
    account: { name: "editor" },
  });
  const [record] = await accesslog("add", NEW);
  t.same(
    record?.attributes.reqAuthzID,
    ["cn=editor,ou=service-accounts,dc=example,dc=org"],
    "the accesslog names the account",
  );
});

t.test("@ldapModify applies several changes in one request", async (t) => {
  const { body } = await gateway.query(
    `mutation($dn: DN, $input: [PersonModification!]!) { updatePerson(dn: $dn, input: $input) { title mail telephoneNumbers description } }`,
    {
      dn: NEW,
      input: [
        {
          operation: "replace",
          changes: { title: "Engineer", description: "en~Hired|de~Eingestellt" },
        },
        { operation: "add", changes: { mail: ["nb@example.org"] } },
        { operation: "delete", changes: { phone: null } },
      ],
    },
  );
  t.notOk(body.errors);
  const person = (body.data as { updatePerson: Record<string, unknown> }).updatePerson;
  t.equal(person.title, "Engineer");
  t.same(person.telephoneNumbers, []);
  t.equal(person.description, "Hired");
  const records = await accesslog("modify", NEW);
  t.equal(records.length, 1, "one modify request");
  t.same(records[0]?.attributes.reqAuthzID, ["cn=editor,ou=service-accounts,dc=example,dc=org"]);
  t.ok((records[0]?.attributes.reqMod as string[]).some((mod) => mod.startsWith("mail:+")));
});

t.test("@ldapModify finds the entry by its internal id too", async (t) => {
  const { body: read } = await gateway.query(`query($dn: DN!) { personByDn(dn: $dn) { id } }`, {
    dn: NEW,
  });
  const id = (read.data as { personByDn: { id: string } }).personByDn.id;
  const { body } = await gateway.query(
    `mutation($id: ID) { updatePerson(id: $id, input: [{ operation: replace, changes: { title: "Lead" } }]) { title } }`,
    { id },
  );
  t.same(body.data, { updatePerson: { title: "Lead" } });
});

t.test("@ldapModifyDn moves the entry to rdn + the type's base", async (t) => {
  const { body } = await gateway.query(
    `mutation { movePerson(dn: "${NEW}", rdn: "uid=newbie,ou=sales") { dn uid } }`,
  );
  t.notOk(body.errors);
  t.same(body.data, { movePerson: { dn: `uid=newbie,ou=sales,${PEOPLE}`, uid: "newbie" } });
  t.match(gateway.writes.at(-1), {
    operation: "modifyDN",
    dn: NEW,
    newDN: `uid=newbie,ou=sales,${PEOPLE}`,
  });
});

t.test("@ldapDelete deletes and answers the DN", async (t) => {
  const dn = `uid=newbie,ou=sales,${PEOPLE}`;
  const { body } = await gateway.query(`mutation($dn: DN) { deletePerson(dn: $dn) }`, { dn });
  t.same(body.data, { deletePerson: dn });
  t.equal(await gateway.directory!.get(dn), undefined);
  const [record] = await accesslog("delete", dn);
  t.same(record?.attributes.reqAuthzID, ["cn=editor,ou=service-accounts,dc=example,dc=org"]);
});

t.test("a write the directory refuses keeps its code, and nothing was written", async (t) => {
  const before = gateway.writes.length;
  const { body } = await gateway.query(
    `mutation { createPerson(rdn: "uid=prossi,ou=engineering", input: { cn: "Again", sn: "Again" }) { dn } }`,
  );
  t.equal(body.errors?.[0]?.extensions.code, "CONFLICT");
  t.equal(body.errors?.[0]?.extensions.annalCode, "ANNAL_LDAP_ALREADY_EXISTS");
  t.equal(gateway.writes.length, before, "afterWrite only follows writes that happened");
});

t.test(
  "beforeWrite hears of each write first, with what a modify changes; if it fails nothing is written",
  async (t) => {
    const dn = `uid=owojcik,ou=engineering,${PEOPLE}`;
    const { body } = await gateway.query(
      `mutation($dn: DN) { updatePerson(dn: $dn, input: [{ operation: replace, changes: { title: "Staff", phone: ["+1"] } }]) { title } }`,
      { dn },
    );
    t.same(body.data, { updatePerson: { title: "Staff" } });
    t.match(announced.at(-1), {
      operation: "modify",
      dn,
      actor: "cn=editor,ou=service-accounts,dc=example,dc=org",
      changes: [
        { operation: "replace", attribute: "title" },
        { operation: "replace", attribute: "telephoneNumber" },
      ],
    });
    refuse = true;
    t.teardown(() => {
      refuse = false;
    });
    const refused = await gateway.query(
      `mutation($dn: DN) { updatePerson(dn: $dn, input: [{ operation: replace, changes: { title: "Never" } }]) { title } }`,
      { dn },
    );
    t.equal(refused.body.errors?.[0]?.extensions.code, "INTERNAL_SERVER_ERROR");
    t.same((await gateway.directory!.get(dn, { attributes: ["title"] }))?.attributes.title, [
      "Staff",
    ]);
  },
);
