import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { misnamedSortPair } from "../../src/app/directory.ts";
import { createDirectoryClient, loadDirectorySchema } from "../../src/directory/index.ts";
import { capturedLogger } from "../http/support.ts";
import { appConfig } from "../support/app-config.ts";
import { testDatabase } from "../support/postgres.ts";
import { startSlapd } from "../support/slapd.ts";

t.setTimeout(120_000);

/**
 * A sort pair's index is read only by a sort whose keys are the schema's spelling of user
 * attributes. A pair named otherwise was built and never read, without a word: annal now
 * refuses to start, naming the pair and the spelling the schema has.
 */
t.test("a sort pair named otherwise than the schema spells it stops the start", async (t) => {
  const slapd = await startSlapd();
  t.teardown(() => slapd.stop());
  const db = await testDatabase(t);
  const refusals: [pair: string, message: RegExp][] = [
    ['["sn", "givenname"]', /the directory's schema spells givenname as givenName/],
    ['["commonName", "sn"]', /the directory's schema spells commonName as cn/],
    ['["sn", "nickname"]', /the directory's schema has no attribute nickname/],
    ['["sn", "modifyTimestamp"]', /modifyTimestamp is an operational attribute/],
  ];
  for (const [pair, message] of refusals) {
    const config = await appConfig(t, {
      db,
      slapd,
      captureInterval: "1s",
      extraToml: `[[directory.types]]
name = "person"
base = "ou=people,dc=example,dc=org"
filter = "(objectClass=person)"
sortPairs = [${pair}]
`,
    });
    const { log } = capturedLogger();
    await t.rejects(
      startAnnal({ config, log }),
      { code: "ANNAL_SORT_PAIR_MISNAMED", message },
      `sortPairs = [${pair}]`,
    );
    const port = config.server.port;
    await t.rejects(fetch(`http://127.0.0.1:${port}/healthz`), "no server was left listening");
  }

  const client = createDirectoryClient({
    url: slapd.url,
    bindDN: slapd.bindDN,
    password: slapd.password,
  });
  t.teardown(() => client.close());
  const schema = await loadDirectorySchema(client);
  const spelt = await appConfig(t, {
    db,
    slapd,
    captureInterval: "1s",
    extraToml: `[[directory.types]]
name = "person"
base = "ou=people,dc=example,dc=org"
filter = "(objectClass=person)"
sortPairs = [["sn", "givenName"], ["sn", "cn"]]
`,
  });
  t.equal(misnamedSortPair(spelt, schema), undefined, "pairs spelt as the schema spells them");
});
