import t from "tap";
import { demoGatewayToml, startGateway } from "../support/graphql-gateway.ts";

/**
 * A request reads at most `[graphql.limits] maxEntries` directory entries: the cost limit
 * refuses what it can foresee, this bounds what it cannot (how large a list really is).
 */
const gateway = await startGateway(t, {
  toml: `${await demoGatewayToml()}\n[graphql.limits]\nmaxEntries = 30\n`,
});

t.test("the read that passes maxEntries fails with its own code; the rest stands", async (t) => {
  const small = await gateway.query(`{ people(first: 10) { nodes { uid } } }`);
  t.notOk(small.body.errors, "10 entries are within the bound");
  t.equal((small.body.data as { people: { nodes: unknown[] } }).people.nodes.length, 10);

  const { status, body } = await gateway.query(
    `{ viewer { authInfo { name } } people(first: 100) { nodes { uid } } }`,
  );
  t.equal(status, 200);
  t.match(body.errors, [
    { path: ["people"], extensions: { code: "GRAPHQL_ENTRY_LIMIT_EXCEEDED", limit: 30 } },
  ]);
  t.match(body.data, { viewer: { authInfo: { name: "editor" } }, people: null });
});
