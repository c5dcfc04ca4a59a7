import { writeFile, readFile } from "node:fs/promises";
import { request as httpRequest, type IncomingMessage } from "node:http";
import path from "node:path";
import t from "tap";
import { chainBatch, verifyExport } from "../../src/audit/index.ts";
import { runAnnal } from "../cli/support.ts";
import { OpenApiResponses } from "../support/openapi-responses.ts";
import { testDatabase } from "../support/postgres.ts";
import { addPeople, restHarness, testConfig } from "./fixtures/harness.ts";

t.setTimeout(300_000);

const q = encodeURIComponent;

/** GET over a real socket: the body's exact bytes and the trailers after it. */
function fetchWithTrailers(url: URL, headers: Record<string, string>) {
  return new Promise<{ response: IncomingMessage; body: Buffer }>((resolve, reject) => {
    const request = httpRequest(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ response, body: Buffer.concat(chunks) }));
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end();
  });
}

t.test(
  "a signed export verifies offline with the public key, and not once a byte changed",
  async (t) => {
    const dir = t.testdir();
    const base = testConfig();
    const config = { ...base, database: { ...base.database, dataDir: dir } };
    const h = await restHarness(t, { config });
    await addPeople(h.history);
    await h.history.settled();
    while ((await chainBatch(h.pool, 1000)) > 0);

    const keys = await h.app.inject({ method: "GET", url: "/api/keys" });
    t.equal(keys.statusCode, 200, "the public keys need no credential");
    const jwks = keys.json() as { keys: { kty: string; crv: string; kid: string; x: string }[] };
    t.match(jwks.keys, [{ kty: "OKP", crv: "Ed25519", alg: "EdDSA", kid: String, x: String }]);
    t.notOk("d" in jwks.keys[0]!, "no private part");
    const document = new OpenApiResponses((await h.get("/api.json")).json());
    t.same(
      document.departures({
        method: "GET",
        path: "/api/keys",
        status: keys.statusCode,
        contentType: keys.headers["content-type"] as string | undefined,
        body: keys.body,
      }),
      [],
      "as the OpenAPI document describes it",
    );

    const address = await h.app.listen({ host: "127.0.0.1", port: 0 });
    const url = new URL(
      `/api/entries/users?sort=uid&fields=cn,mail&filename=people.csv&export=${q('{"sign":true}')}`,
      address,
    );
    const { response, body } = await fetchWithTrailers(url, h.auth);
    t.equal(response.statusCode, 200);
    t.equal(response.headers.trailer, "Annal-Signature");
    t.equal(response.headers["annal-signature-key"], jwks.keys[0]!.kid);
    const checkpoint = await h.pool.query<{ position: string }>(
      "SELECT position FROM projection_entries._checkpoint",
    );
    t.equal(response.headers["annal-log-position"], String(checkpoint.rows[0]?.position));
    const head = await h.pool.query<{ position: string; hash: Buffer }>(
      "SELECT position, hash FROM event_chain WHERE position = $1",
      [Number(checkpoint.rows[0]?.position)],
    );
    t.equal(
      response.headers["annal-chain-head"],
      `${head.rows[0]?.position}:${head.rows[0]?.hash.toString("hex")}`,
    );
    const signature = response.trailers["annal-signature"];
    t.type(signature, "string", "the signature comes as a trailer");
    t.ok(body.toString("utf8").startsWith("entryUUID,dn,cn,mail"));

    const files = {
      export: path.join(dir, "people.csv"),
      signature: path.join(dir, "people.csv.sig"),
      keys: path.join(dir, "keys.json"),
    };
    await writeFile(files.export, body);
    await writeFile(files.signature, signature!);
    await writeFile(files.keys, keys.body);
    const holds = await runAnnal([
      "verify-export",
      files.export,
      files.signature,
      "--keys",
      files.keys,
    ]);
    t.equal(holds.code, 0, holds.stderr);
    t.match(
      holds.stdout,
      /people\.csv: the signature holds \(key [\w-]+, signed .*\); \d+ bytes reflecting the log at event \d+; chain head at event \d+: [0-9a-f]{64}\n/,
    );

    const keysUrl = new URL("/api/keys", address).href;
    const fromUrl = await runAnnal([
      "verify-export",
      files.export,
      files.signature,
      "--keys",
      keysUrl,
    ]);
    t.equal(fromUrl.code, 0, `with the keys fetched from the server: ${fromUrl.stderr}`);

    const changed = Buffer.from(await readFile(files.export));
    changed[changed.length - 3] = changed[changed.length - 3]! ^ 0x01;
    await writeFile(files.export, changed);
    const fails = await runAnnal([
      "verify-export",
      files.export,
      files.signature,
      "--keys",
      files.keys,
    ]);
    t.equal(fails.code, 1);
    t.match(
      fails.stderr,
      /^annal: ANNAL_SIGNATURE_INVALID: .*people\.csv is not the file that was signed/,
    );

    await writeFile(files.export, body);
    const forged = signature!.replace(/^(.)/, (c) => (c === "e" ? "f" : "e"));
    await writeFile(files.signature, forged);
    const bad = await runAnnal([
      "verify-export",
      files.export,
      files.signature,
      "--keys",
      files.keys,
    ]);
    t.equal(bad.code, 1);
    t.match(bad.stderr, /^annal: ANNAL_SIGNATURE_(INVALID|UNREADABLE)/);
  },
);

t.test(
  "every process serves every published key: an export signed by one checks with another's keys",
  async (t) => {
    const database = await testDatabase(t);
    // Two processes on one database, each with a data directory (and a generated key) of its own.
    const harness = async (dataDir: string) => {
      const base = testConfig();
      return restHarness(t, {
        database,
        config: { ...base, database: { ...base.database, dataDir } },
      });
    };
    const root = t.testdir();
    const one = await harness(path.join(root, "one"));
    const other = await harness(path.join(root, "other"));
    await addPeople(one.history);
    await one.history.settled();
    while ((await chainBatch(one.pool, 1000)) > 0);

    const address = await one.app.listen({ host: "127.0.0.1", port: 0 });
    const url = new URL(
      `/api/entries/users?sort=uid&fields=cn&filename=people.csv&export=${q('{"sign":true}')}`,
      address,
    );
    const { response, body } = await fetchWithTrailers(url, one.auth);
    t.equal(response.statusCode, 200);
    const kid = response.headers["annal-signature-key"];
    const theirs = (await other.app.inject({ method: "GET", url: "/api/keys" })).json() as {
      keys: { kid: string }[];
    };
    t.equal(theirs.keys.length, 2, "the other process serves its own key and the first's");
    t.ok(
      theirs.keys.some((key) => key.kid === kid),
      "among them the key that signed",
    );

    const file = path.join(root, "people.csv");
    await writeFile(file, body);
    const statement = await verifyExport(file, response.trailers["annal-signature"]!, theirs);
    t.equal(statement.kid, kid, "the export checks with the other process's keys");
  },
);

t.test("sign must be true or false", async (t) => {
  const h = await restHarness(t);
  const response = await h.get(
    `/api/entries/users?fields=cn&filename=people.csv&export=${q('{"sign":"yes"}')}`,
  );
  t.equal(response.statusCode, 400);
  t.equal(response.json().code, "ANNAL_EXPORT_OPTIONS_INVALID");
});
