import pino from "pino";
import t, { type Test } from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { freePort } from "../../src/ports.ts";
import { appConfig } from "../support/app-config.ts";
import { testDatabase } from "../support/postgres.ts";
import { parseConfig } from "../../src/config/index.ts";
import {
  captureOnce,
  readCaptureCheckpoint,
  startCaptureWorker,
  type CaptureContext,
} from "../../src/capture/index.ts";
import { createDirectoryClient } from "../../src/directory/index.ts";
import { sshaPassword } from "../../src/slapd/index.ts";
import { captureFixture, directoryCaptureFixture, person } from "../support/capture.ts";
import { startDirsrv } from "../support/dirsrv.ts";
import { nextSecond } from "../support/clock.ts";
import { startSlapd } from "../support/slapd.ts";
import { captureWithoutIdentity, metrics } from "../../src/metrics.ts";
import { eventually } from "../support/eventually.ts";
import { testServer } from "../http/support.ts";

const DORA = "uid=dora,ou=people,dc=example,dc=org";

/** A reader with no right to the accesslog, as many a directory's own accounts are. */
const seedLdif = `dn: ${DORA}
objectClass: inetOrgPerson
uid: dora
cn: Dora
sn: D
userPassword: ${sshaPassword("dora-pw")}
`;

const config = (base: string) =>
  parseConfig(
    `[directory]
url = "ldap://127.0.0.1:1"
bindDN = "cn=admin,dc=example,dc=org"
password = "\${LDAP_PASSWORD}"
base = "${base}"`,
    { path: "test.toml", env: { LDAP_PASSWORD: "x" } },
  );

/**
 * Runs capture's worker on `context` as annal does, and waits until /readyz names `code` as why
 * capture cannot capture (before its first failed pass, /readyz is 503 too: capture's first
 * import is not recorded).
 */
async function readyzNames(
  t: Test,
  context: CaptureContext,
  annalConfig: ReturnType<typeof config>,
  code: string,
): Promise<void> {
  const worker = await startCaptureWorker(context, {
    source: "accesslog",
    interval: 50,
    reconcileInterval: 600_000,
    snapshotInterval: 0,
  });
  t.teardown(() => worker.stop());
  const { server } = testServer(t, { pool: context.pool, config: annalConfig });
  const response = await eventually(
    async () => {
      const answer = await server.inject({ method: "GET", url: "/readyz" });
      return answer.json().checks.capture.code !== "ANNAL_HISTORY_BUILDING" ? answer : undefined;
    },
    { what: `/readyz names ${code} after the first failed pass` },
  );
  t.match(response.json().checks.capture, { status: "failed", code });
}

t.test(
  "a base the directory does not have is refused with a code, imports nothing, and /readyz names it",
  async (t) => {
    const f = await captureFixture(t);
    const missing = { ...f.context, base: "ou=nowhere,dc=example,dc=org" };
    await t.rejects(captureOnce(missing, "accesslog"), { code: "ANNAL_DIRECTORY_BASE_MISSING" });
    t.equal(await readCaptureCheckpoint(f.db.pool, "accesslog"), undefined, "nothing imported");

    await readyzNames(t, missing, config(missing.base), "ANNAL_DIRECTORY_BASE_MISSING");
  },
);

t.test(
  "a base that holds nothing but itself is refused with a code, imports nothing, and /readyz names it",
  async (t) => {
    const EMPTY = "ou=empty,dc=example,dc=org";
    const f = await captureFixture(t, {
      seedLdif: `dn: ${EMPTY}\nobjectClass: organizationalUnit\nou: empty\n`,
    });
    const empty = { ...f.context, base: EMPTY };
    await t.rejects(captureOnce(empty, "accesslog"), {
      code: "ANNAL_DIRECTORY_BASE_EMPTY",
      message: /ou=empty,dc=example,dc=org holds no entry/,
    });
    t.equal(await readCaptureCheckpoint(f.db.pool, "accesslog"), undefined, "nothing imported");
    const stored = await f.db.pool.query("SELECT 1 FROM events WHERE type = 'EntrySnapshot'");
    t.equal(stored.rowCount, 0, "not even the base's own entry");

    await readyzNames(t, empty, config(EMPTY), "ANNAL_DIRECTORY_BASE_EMPTY");

    // Once the base holds an entry, the next pass imports it and capture is ready.
    await f.directory.add(`ou=first,${EMPTY}`, {
      objectClass: ["organizationalUnit"],
      ou: ["first"],
    });
    await eventually(
      async () => (await readCaptureCheckpoint(f.db.pool, "accesslog")) !== undefined || undefined,
      { what: "the import, once the base holds an entry" },
    );
  },
);

t.test(
  "an accesslog source that annal's bind cannot read is refused, not captured from in silence",
  async (t) => {
    const f = await captureFixture(t, { seedLdif });
    const directory = createDirectoryClient({
      url: f.slapd.url,
      bindDN: DORA,
      password: "dora-pw",
    });
    t.teardown(() => directory.close());
    const unread = { ...f.context, directory };
    const refused = await captureOnce(unread, "accesslog").catch((error: unknown) => error);
    t.match(refused, {
      code: "ANNAL_CAPTURE_SOURCE_MISSING",
      message: /no cn=accesslog that annal's bind can read/,
    });
    t.equal(await readCaptureCheckpoint(f.db.pool, "accesslog"), undefined, "nothing imported");
    // The same account may poll: its source is the entries themselves.
    t.ok((await captureOnce(unread, "poll")).recorded >= 0);
    t.not(await readCaptureCheckpoint(f.db.pool, "poll"), undefined, "poll imports");
    // Set to capture from the accesslog, annal is not ready, and says why.
    await readyzNames(t, unread, config(f.slapd.base), "ANNAL_CAPTURE_SOURCE_MISSING");
  },
);

t.test(
  "a directory annal could not use at start: annal runs without it, and /readyz says so",
  async (t) => {
    const db = await testDatabase(t);
    // Nothing listens there: the schema cannot be read, nothing will be captured.
    const nowhere = `ldap://127.0.0.1:${await freePort()}`;
    const config = await appConfig(t, {
      db,
      slapd: { url: nowhere, bindDN: "cn=admin,dc=example,dc=org", password: "x" },
      captureInterval: "200ms",
    });
    const annal = await startAnnal({ config, log: pino({ level: "silent" }) });
    t.teardown(() => annal.stop());
    const response = await fetch(`${annal.url}/readyz`);
    t.equal(response.status, 503);
    t.match((await response.json()) as object, {
      status: "unready",
      checks: { capture: { status: "failed", code: "ANNAL_LDAP_UNAVAILABLE" } },
    });
  },
);

t.test(
  "a schema annal's bind reads empty: annal runs without the directory, and /readyz names the code",
  async (t) => {
    const reader = "uid=reader,ou=services,dc=example,dc=org";
    const ds = await startDirsrv({
      seedLdif: `dn: ${reader}\nobjectClass: inetOrgPerson\nuid: reader\ncn: reader\nsn: reader\nuserPassword: ${sshaPassword("reader-pw")}\n`,
    });
    t.teardown(() => ds.stop());
    const root = createDirectoryClient({ url: ds.url, bindDN: ds.bindDN, password: ds.password });
    t.teardown(() => root.close());
    await root.modify("cn=schema", [
      {
        operation: "add",
        attribute: "aci",
        values:
          '(targetattr="attributeTypes || objectClasses")(version 3.0; acl "schema hidden"; deny (read, search, compare) userdn="ldap:///all";)',
      },
    ]);
    const db = await testDatabase(t);
    const config = await appConfig(t, {
      db,
      slapd: { url: ds.url, bindDN: reader, password: "reader-pw" },
      captureInterval: "200ms",
      captureSource: "changelog",
    });
    const annal = await startAnnal({ config, log: pino({ level: "silent" }) });
    t.teardown(() => annal.stop());
    const response = await fetch(`${annal.url}/readyz`);
    t.equal(response.status, 503);
    t.match((await response.json()) as object, {
      status: "unready",
      checks: { capture: { status: "failed", code: "ANNAL_DIRECTORY_SCHEMA_EMPTY" } },
    });
  },
);

t.test(
  "entries without the configured identity are counted, logged with a code and a hint, in /metrics, and an import of none is refused",
  async (t) => {
    // slapd's entries have entryUUID and never nsUniqueId: asked for 389's identity, it has none.
    const slapd = await startSlapd({ seedLdif });
    t.teardown(() => slapd.stop());
    const f = await directoryCaptureFixture(t, {
      server: slapd,
      source: "accesslog",
      identity: "nsUniqueId",
    });
    const warned: Record<string, unknown>[] = [];
    const log = {
      ...f.context.log,
      warn: ((fields: Record<string, unknown>) =>
        void warned.push(fields)) as typeof f.context.log.warn,
    };
    const context = { ...f.context, log };
    const counted = async () =>
      (await captureWithoutIdentity.get()).values.find((v) => v.labels.source === "import")
        ?.value ?? 0;
    const before = await counted();
    await t.rejects(captureOnce(context, "accesslog"), {
      code: "ANNAL_IMPORT_STORED_NOTHING",
      message: /read \d+ entries and could store none/,
    });
    t.equal(await readCaptureCheckpoint(f.db.pool, "accesslog"), undefined, "nothing imported");
    const warning = warned.find((fields) => fields.code === "ANNAL_ENTRY_WITHOUT_IDENTITY");
    t.match(warning, { entries: Number, hint: /entryUUID/ }, "one warning with a code and a hint");
    const examples = (warning?.examples ?? []) as string[];
    t.ok(
      examples.length > 0 && examples.every((dn) => dn.endsWith("dc=example,dc=org")),
      `naming entries it could not record (${examples.join("; ")})`,
    );
    t.equal(await counted(), before + (warning?.entries as number), "counted in the metric");
    const metricsText = await metrics.metrics();
    t.match(metricsText, /annal_capture_entries_without_identity_total\{source="import"\} [1-9]/);

    await readyzNames(t, context, config(slapd.base), "ANNAL_IMPORT_STORED_NOTHING");
  },
);

for (const source of ["changelog", "poll"] as const) {
  t.test(
    `${source}: a write a pass reads of an entry without the configured identity is counted, logged with a code and a hint, in /metrics, never skipped in silence`,
    async (t) => {
      // 389 turns its entryUUID plugin on at its first restart: entries made before it have
      // none until the plugin's fixup task, the case the guide tells of.
      const ds = await startDirsrv({ changelog: true });
      t.teardown(() => ds.stop());
      const root = createDirectoryClient({ url: ds.url, bindDN: ds.bindDN, password: ds.password });
      t.teardown(() => root.close());
      const carol = `uid=carol,ou=people,${ds.base}`;
      const dave = `uid=dave,ou=people,${ds.base}`;
      await root.add(carol, person("carol"));
      // As the guide has it: the changelog logs each entry's entryUUID too, from the restart.
      await root.modify("cn=Retro Changelog Plugin,cn=plugins,cn=config", [
        { operation: "add", attribute: "nsslapd-attribute", values: "entryuuid:targetEntryUUID" },
      ]);
      await ds.restart();
      // Poll's checkpoint after the import is the newest modifyTimestamp it read (dave's), and
      // a pass reads that whole second again: the seed's entries, without identity, must not
      // share it (a quick restart left them in it, and the pass counted them again).
      await nextSecond();
      await root.add(dave, person("dave"));

      const f = await directoryCaptureFixture(t, { server: ds, source, identity: "entryUUID" });
      const warned: Record<string, unknown>[] = [];
      const log = {
        ...f.context.log,
        warn: ((fields: Record<string, unknown>) =>
          void warned.push(fields)) as typeof f.context.log.warn,
      };
      const context = { ...f.context, log };
      await captureOnce(context, source); // the import: carol and the seed are counted there
      t.ok(
        warned.some((fields) => fields.code === "ANNAL_ENTRY_WITHOUT_IDENTITY"),
        "the import counts what it could not record",
      );
      warned.length = 0;
      const counted = async () =>
        (await captureWithoutIdentity.get()).values.find((v) => v.labels.source === source)
          ?.value ?? 0;
      const before = await counted();

      await nextSecond(); // poll reads from the second of its checkpoint on
      for (const dn of [carol, dave]) {
        await root.modify(dn, [{ operation: "replace", attribute: "title", values: "Changed" }]);
      }
      t.equal((await captureOnce(context, source)).recorded, 1, "dave's write is recorded");
      const warning = warned.find((fields) => fields.code === "ANNAL_ENTRY_WITHOUT_IDENTITY");
      t.match(
        warning,
        { entries: 1, examples: [carol], hint: /entryUUID plugin and its fixup task/ },
        "carol's is said, with a code, her DN and a hint",
      );
      t.equal(await counted(), before + 1, `counted in the metric under source="${source}"`);
      t.match(
        await metrics.metrics(),
        new RegExp(`annal_capture_entries_without_identity_total\\{source="${source}"\\} [1-9]`),
      );
    },
  );
}
