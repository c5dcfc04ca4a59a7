import fc from "fast-check";
import pino from "pino";
import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { createToken } from "../../src/auth/index.ts";
import { sampleLdif } from "../../src/demo/index.ts";
import {
  createDirectoryClient,
  loadDirectorySchema,
  type DirectoryClient,
  type DirectoryEntry,
  type SearchOptions,
} from "../../src/directory/index.ts";
import { NameSet } from "../../src/events/index.ts";
import type { FilterNode } from "../../src/filters/index.ts";
import { projectionDirectory } from "../../src/graphql/gateway/projection-reads.ts";
import { waitForProjection } from "../../src/projector/index.ts";
import { GATEWAY_TOML } from "../support/accounts.ts";
import { appConfig } from "../support/app-config.ts";
import { eventually } from "../support/eventually.ts";
import { startGateway } from "../support/graphql-gateway.ts";
import { testDatabase } from "../support/postgres.ts";
import { startSlapd } from "../support/slapd.ts";

const BASE = "dc=example,dc=org";
const PEOPLE = "ou=people,dc=example,dc=org";
const GROUPS = "ou=groups,dc=example,dc=org";

/**
 * The demo gateway's queries: the README's, and one per read directive (searches with
 * `where`, `by` and `q`, paging, finds, lookups by DN and by attribute, DN resolution, the
 * operational attributes the directory computes).
 */
const DEMO_QUERIES: readonly string[] = [
  `{ people(first: 5, where: { department: { eq: "Sales" }, city: { eq: "Paris" } }) {
      totalCount
      nodes { displayName title description manager { displayName } groups { cn }
              contact { label fields { label value } } }
      pageInfo { hasNextPage endCursor } } }`,
  `{ people(first: 7) { totalCount nodes { dn uid sn givenName mail employeeNumber
      telephoneNumbers mobile createdAt hasSubordinates photo } pageInfo { hasNextPage } } }`,
  `{ people(first: 3, after: "${Buffer.from("x").toString("base64")}") { nodes { uid } } }`,
  `{ people(first: 20, where: { _or_: [{ title: { contains: "engineer" } }, { sn: { startsWith: "M" } }] }) {
      nodes { uid title managersManager { uid } managerEntry { uid } managerByPath { uid } department { ou } } } }`,
  `{ people(first: 10, q: "ross") { totalCount nodes { uid } } }`,
  `{ people(first: 10, by: { cities: ["Berlin", "Paris"] }) { totalCount nodes { uid descriptionDe } } }`,
  `{ person(by: { uid: "prossi" }) { uid displayName groups { cn memberList { uid } } } }`,
  `{ personUnpaged(q: "owojcik") { uid mail } }`,
  `{ personByDn(dn: "uid=prossi,ou=engineering,ou=people,dc=example,dc=org") { uid id } }`,
  // All of them in one page: slapd walks its tree here (its objectClass index names the
  // roles' groups too, more than ou=groups holds), so only the order differs.
  `{ groups(first: 50) { totalCount nodes { cn members(first: 5) { totalCount nodes { uid } }
      memberEntries { nodes { __typename } } } } }`,
  `{ departments { nodes { __typename } } }`,
  `{ entry(dn: "cn=annal-admins,ou=groups,dc=example,dc=org") { __typename } admins { cn } }`,
];

/** Values the generated filters compare with: some the demo holds, some it does not. */
const VALUES = ["Rossi", "prossi", "Engineering", "Sales", "Paris", "Berlin", "engineer", "x"];
const ATTRIBUTES = ["uid", "cn", "sn", "givenName", "title", "ou", "l", "employeeType", "mail"];

const leaf: fc.Arbitrary<FilterNode> = fc.oneof(
  fc.record({
    op: fc.constant("eq" as const),
    attribute: fc.constantFrom(...ATTRIBUTES),
    value: fc.constantFrom(...VALUES),
  }),
  fc.record({ op: fc.constant("present" as const), attribute: fc.constantFrom(...ATTRIBUTES) }),
  fc.record({
    op: fc.constant("substring" as const),
    attribute: fc.constantFrom(...ATTRIBUTES),
    initial: fc.constantFrom("r", "P", "e", "ma"),
    any: fc.constant([] as string[]),
  }),
  fc.record({
    op: fc.constant("eq" as const),
    attribute: fc.constant("objectClass"),
    value: fc.constantFrom("inetOrgPerson", "groupOfNames", "organizationalUnit"),
  }),
);

const filters: fc.Arbitrary<FilterNode> = fc.letrec<{ node: FilterNode }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.record({
      op: fc.constantFrom("and" as const, "or" as const),
      filters: fc.array(tie("node"), { minLength: 1, maxLength: 3 }),
    }),
    fc.record({ op: fc.constant("not" as const), filter: tie("node") }),
  ),
})).node;

/** A `groups` page's nodes by cn, other answers as they are. */
function inCnOrder(data: unknown): unknown {
  const groups = (data as { groups?: { nodes: { cn: string }[] } } | undefined)?.groups;
  if (groups === undefined) return data;
  const nodes = [...groups.nodes].sort((a, b) => a.cn.localeCompare(b.cn));
  return { ...(data as object), groups: { ...groups, nodes } };
}

async function collect(
  directory: DirectoryClient,
  base: string,
  options: SearchOptions,
): Promise<{ dn: string; attributes: Record<string, unknown> }[]> {
  const found: DirectoryEntry[] = [];
  for await (const page of directory.search(base, options)) found.push(...page);
  return found.map((entry) => ({
    dn: entry.dn,
    attributes: Object.fromEntries(
      Object.entries(entry.attributes)
        .map(([name, values]) => [name, values.map(String)] as const)
        .sort(([a], [b]) => a.localeCompare(b)),
    ),
  }));
}

t.test("the gateway answers the same from the projections as from the directory", async (t) => {
  const slapd = await startSlapd({ seedLdif: sampleLdif() });
  t.teardown(() => slapd.stop());
  const db = await testDatabase(t);
  const config = await appConfig(t, {
    db,
    slapd,
    captureInterval: "250ms",
    extraToml: GATEWAY_TOML,
  });
  t.equal(config.graphql.reads, "projection", "projection reads are the default");
  const annal = await startAnnal({ config, log: pino({ level: "silent" }) });
  t.teardown(() => annal.stop());
  const { token } = await createToken(db.pool, annal.store, { name: "reader", access: ["read"] });
  await eventually(
    async () =>
      (await db.pool.query("SELECT 1 FROM capture_checkpoints WHERE source = 'accesslog'"))
        .rowCount,
    { what: "the first start's import" },
  );
  await waitForProjection(db.pool, "entries", await annal.store.head(), 30_000);
  // The same schema over the same slapd, reading the directory.
  const direct = await startGateway(t, { slapd });

  const viaProjection = async (query: string) => {
    const response = await fetch(`${annal.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query }),
    });
    return (await response.json()) as {
      data?: unknown;
      errors?: unknown;
      extensions?: { logPosition: unknown; reads: string };
    };
  };

  // The gateway turns to the projection once it has applied the import's head; an event the
  // start appended after the wait above may still be on its way.
  await eventually(
    async () => (await viaProjection("{ __typename }")).extensions?.reads === "projection",
    { what: "the gateway reading the projection" },
  );

  await t.test("every demo query", async (t) => {
    for (const query of DEMO_QUERIES) {
      const projected = await viaProjection(query);
      const { body } = await direct.query(query);
      t.same(inCnOrder(projected.data), inCnOrder(body.data), query);
      t.same(projected.errors, body.errors, `${query}: errors`);
      t.equal(projected.extensions?.reads, "projection");
      t.match(projected.extensions?.logPosition, { position: Number, transactionId: String });
    }
    t.ok(direct.trips.searches > 0, "the directory side did search");
  });

  await t.test("generated filters find the same entries, in the same order", async (t) => {
    const client = createDirectoryClient({
      url: slapd.url,
      bindDN: slapd.bindDN,
      password: slapd.password,
    });
    t.teardown(() => client.close());
    const schema = await loadDirectorySchema(client);
    const projection = projectionDirectory(client, {
      db: db.pool,
      base: BASE,
      schema,
      redacted: new NameSet(config.directory!.capture.redact),
    });
    // Every read below must be the projection's: the directory's client counts none.
    let direct = 0;
    const counted = new Proxy(client, {
      get(target, property, receiver) {
        if (property === "search") direct++;
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === "function" ? (value as Function).bind(target) : value; // eslint-disable-line @typescript-eslint/no-unsafe-function-type
      },
    });
    const reads = projectionDirectory(counted, {
      db: db.pool,
      base: BASE,
      schema,
      redacted: new NameSet(config.directory!.capture.redact),
    });
    const attributes = ["uid", "cn", "title", "ou", "l", "objectClass", "member", "entryUUID"];
    let walked = 0;
    await fc.assert(
      fc.asyncProperty(
        filters,
        fc.constantFrom(BASE, PEOPLE, GROUPS),
        fc.constantFrom("sub" as const, "one" as const, "children" as const, "base" as const),
        fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined }),
        async (filter, base, scope, sizeLimit) => {
          const options: SearchOptions = { filter, scope, attributes, pageSize: 7 };
          const expected = await collect(client, base, options);
          const actual = await collect(projection, base, options);
          // The same entries with the same values.
          const byDN = (list: typeof expected) =>
            JSON.stringify([...list].sort((a, b) => (a.dn < b.dn ? -1 : a.dn > b.dn ? 1 : 0)));
          if (byDN(actual) !== byDN(expected)) {
            t.same(actual, expected, JSON.stringify(options));
            return false;
          }
          // The same order: the directory's entry ids. (slapd walks its tree instead, each
          // level by RDN length, when a filter's index candidates outnumber the base's
          // subtree: then only the projection's own order is checked.)
          const dns = (list: typeof expected) => list.map((entry) => entry.dn).join("|");
          let inIdOrder = dns(actual) === dns(expected);
          let bounded: typeof expected | undefined;
          let directoryBounded: typeof expected | undefined;
          if (sizeLimit !== undefined) {
            bounded = await collect(projection, base, { ...options, sizeLimit });
            directoryBounded = await collect(client, base, { ...options, sizeLimit });
            inIdOrder &&= dns(directoryBounded) === dns(expected.slice(0, sizeLimit));
          }
          if (!inIdOrder) walked++;
          if (bounded === undefined) return true;
          const wanted = inIdOrder ? directoryBounded : actual.slice(0, sizeLimit);
          if (JSON.stringify(bounded) !== JSON.stringify(wanted)) {
            t.same(bounded, wanted, `${base} ${JSON.stringify(options)}, sizeLimit ${sizeLimit}`);
            return false;
          }
          return true;
        },
      ),
      { numRuns: 100, seed: 37 },
    );
    t.ok(walked < 50, `slapd answered ${walked} of 100 searches in its tree's order, not its ids'`);
    await collect(reads, PEOPLE, { filter: { op: "present", attribute: "uid" } });
    t.equal(direct, 0, "a covered search never reaches the directory");
    // A redacted attribute is outside what capture records: the directory answers.
    await collect(reads, PEOPLE, { attributes: ["userPassword"] });
    t.equal(direct, 1, "a search asking for a redacted attribute goes to the directory");
  });
});
