import { Attribute, Change, Client } from "ldapts";
import t, { type Test } from "tap";
import {
  createDirectoryClient,
  DirectoryError,
  loadDirectorySchema,
  parseSubschema,
} from "../../src/directory/index.ts";
import { sshaPassword } from "../../src/slapd/index.ts";
import { startDirsrv } from "../support/dirsrv.ts";
import { startSlapd } from "../support/slapd.ts";

const OCTET_STRING = "1.3.6.1.4.1.1466.115.121.1.40";

t.test("a quoted syntax OID, as AD writes it, reads as the bare one", async (t) => {
  const schema = parseSubschema([
    `( 1.2.840.113556.1.4.2 NAME 'objectGUID' SYNTAX '${OCTET_STRING}' SINGLE-VALUE NO-USER-MODIFICATION )`,
    `( 9.9.1 NAME 'bareGUID' SYNTAX ${OCTET_STRING} SINGLE-VALUE )`,
    `( 9.9.2 NAME 'sizedBlob' SYNTAX '${OCTET_STRING}{16}' )`,
    "( 1.2.840.113556.1.4.8 NAME 'userAccountControl' SYNTAX '1.3.6.1.4.1.1466.115.121.1.27' SINGLE-VALUE )",
    "( 9.9.3 NAME 'guidChild' SUP objectGUID )",
    "( 2.5.4.3 NAME 'cn' SYNTAX '1.3.6.1.4.1.1466.115.121.1.15' )",
  ]);
  for (const name of ["objectGUID", "bareGUID", "sizedBlob", "guidChild"]) {
    t.equal(schema.attribute(name)?.syntax, OCTET_STRING, `${name}'s syntax`);
    t.equal(schema.isBinary(name), true, `${name} is binary`);
  }
  t.equal(schema.attribute("objectGUID")?.operational, true);
  t.equal(schema.attribute("userAccountControl")?.jsonType, "integer");
  t.equal(schema.isBinary("cn"), false);
  t.same(schema.binaryAttributes().sort(), ["bareGUID", "guidChild", "objectGUID", "sizedBlob"]);
});

t.test("objectClass is a user attribute even where AD marks it NO-USER-MODIFICATION", async (t) => {
  const schema = parseSubschema([
    "( 2.5.4.0 NAME 'objectClass' SYNTAX '1.3.6.1.4.1.1466.115.121.1.38' NO-USER-MODIFICATION )",
    "( 1.2.840.113556.1.2.2 NAME 'whenChanged' SYNTAX '1.3.6.1.4.1.1466.115.121.1.24' SINGLE-VALUE NO-USER-MODIFICATION )",
  ]);
  t.equal(schema.isOperational("objectClass"), false, "an entry's type is read from it");
  t.equal(schema.isOperational("whenChanged"), true, "what the server keeps is operational");
});

/** What any server's schema, read by annal, must tell: the names, the binary and operational ones. */
async function readsTheSchema(
  t: Test,
  server: { url: string; bindDN: string; password: string },
): Promise<void> {
  const directory = createDirectoryClient(server);
  t.teardown(() => directory.close());
  const schema = await loadDirectorySchema(directory);
  t.ok(schema.attributeTypes.length > 100, `${schema.attributeTypes.length} attribute types`);
  t.equal(schema.canonical("commonName"), "cn");
  t.equal(schema.isBinary("jpegPhoto"), true, "jpegPhoto is binary");
  t.equal(schema.isBinary("userCertificate"), true, "userCertificate is binary");
  t.equal(schema.isOperational("modifyTimestamp"), true);
  t.equal(schema.attribute("modifyTimestamp")?.format, "date-time");
  t.ok(schema.attributesOf(["inetOrgPerson"]).includes("mail"), "inetOrgPerson's attributes");
}

t.test("the schema is read from the entry 389's root DSE names: cn=schema", async (t) => {
  const ds = await startDirsrv();
  t.teardown(() => ds.stop());
  const client = new Client({ url: ds.url });
  t.teardown(() => client.unbind());
  const root = await client.search("", { scope: "base", attributes: ["subschemaSubentry"] });
  t.equal(root.searchEntries[0]?.subschemaSubentry, "cn=schema");
  await readsTheSchema(t, ds);
  const directory = createDirectoryClient(ds);
  t.teardown(() => directory.close());
  t.equal((await loadDirectorySchema(directory)).isOperational("nsUniqueId"), true);
});

t.test("the schema is read from the entry slapd's root DSE names: cn=Subschema", async (t) => {
  const slapd = await startSlapd();
  t.teardown(() => slapd.stop());
  await readsTheSchema(t, slapd);
});

t.test("a schema the bind DN may not read is a loud error, not an empty schema", async (t) => {
  const reader = "uid=reader,ou=services,dc=example,dc=org";
  const ds = await startDirsrv({
    seedLdif: `dn: ${reader}\nobjectClass: inetOrgPerson\nuid: reader\ncn: reader\nsn: reader\nuserPassword: ${sshaPassword("reader-pw")}\n`,
  });
  t.teardown(() => ds.stop());
  const admin = new Client({ url: ds.url });
  t.teardown(() => admin.unbind());
  await admin.bind(ds.bindDN, ds.password);
  await admin.modify(
    "cn=schema",
    new Change({
      operation: "add",
      modification: new Attribute({
        type: "aci",
        values: [
          '(targetattr="attributeTypes || objectClasses")(version 3.0; acl "schema hidden"; deny (read, search, compare) userdn="ldap:///all";)',
        ],
      }),
    }),
  );
  const directory = createDirectoryClient({ url: ds.url, bindDN: reader, password: "reader-pw" });
  t.teardown(() => directory.close());
  const error = await loadDirectorySchema(directory).then(
    () => undefined,
    (error: unknown) => error,
  );
  t.type(error, DirectoryError);
  t.match(error, {
    code: "ANNAL_DIRECTORY_SCHEMA_EMPTY",
    status: 502,
    dn: "cn=schema",
    message:
      /no attribute types in "cn=schema", the entry the root DSE names in subschemaSubentry: the entry shows annal's bind DN none/,
    hint: /bind DN read .*subschemaSubentry/,
  });
});
