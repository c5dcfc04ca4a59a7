import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import t, { type Test } from "tap";
import {
  captureOnce,
  createNormalizer,
  ensureImported,
  startCaptureWorker,
} from "../../src/capture/index.ts";
import { readAccesslogIndexes } from "../../src/capture/accesslog-indexes.ts";
import { modifiedSince, pollTime } from "../../src/capture/modified-since.ts";
import { parseConfig } from "../../src/config/index.ts";
import {
  createDirectoryClient,
  loadDirectorySchema,
  present,
  type DirectoryClient,
  type DirectoryEntry,
} from "../../src/directory/index.ts";
import { freePort } from "../../src/ports.ts";
import { sshaPassword, toLdif } from "../../src/slapd/index.ts";
import { Projector } from "../../src/projector/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { allProjections } from "../../projections/index.ts";
import { DEMO_TYPES, directoryCaptureFixture } from "../support/capture.ts";
import { startDirsrv, type Dirsrv } from "../support/dirsrv.ts";
import { dirsrvPaths } from "../support/dirsrv/dse.ts";
import { eventually } from "../support/eventually.ts";
import { feed } from "../support/history.ts";
import { testDatabase } from "../support/postgres.ts";
import { adGroup, adOrganizationalUnit, adUser, startSambaDC } from "../support/samba.ts";
import { testPki } from "../support/certificates.ts";
import { startSlapd as startTestSlapd } from "../support/slapd.ts";
import { failureLines } from "../../src/cli/output.ts";

/**
 * docs/connect-your-directory.md, held against real servers: every block it marks
 * `<!-- checked: name -->` is used as it is printed, with only paths, ports and passwords put
 * in, and annal then captures from the server so configured: OpenLDAP (slapd) with nothing to
 * warn about, 389 Directory Server from a new instance's first start on (its `dsconf example`
 * named by URL, and the test's own restart for `dsctl example restart`).
 */
const GUIDE = join(import.meta.dirname, "../../docs/connect-your-directory.md");
const run = promisify(execFile);

async function checkedBlock(name: string): Promise<string> {
  const guide = await readFile(GUIDE, "utf8");
  const marker = guide.indexOf(`<!-- checked: ${name} -->`);
  if (marker < 0) throw new Error(`the guide has no block checked as ${name}`);
  const open = guide.indexOf("```", marker);
  const start = guide.indexOf("\n", open) + 1;
  return guide.slice(start, guide.indexOf("\n```", start) + 1);
}

const ADMIN = "cn=admin,dc=example,dc=org";
const ANNAL = "cn=annal,ou=services,dc=example,dc=org";

function seedLdif(annalPassword: string): string {
  return [
    "dn: dc=example,dc=org\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n",
    "dn: ou=services,dc=example,dc=org\nobjectClass: organizationalUnit\nou: services\n",
    "dn: ou=people,dc=example,dc=org\nobjectClass: organizationalUnit\nou: people\n",
    `dn: ${ANNAL}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\ncn: annal\nuserPassword: ${sshaPassword(annalPassword)}\n`,
  ].join("\n");
}

async function slapadd(args: string[], ldif: string): Promise<void> {
  const child = spawn("slapadd", [...args, "-b", "dc=example,dc=org", "-q"], {
    stdio: ["pipe", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(ldif);
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  if (code !== 0) throw new Error(`slapadd failed: ${stderr}`);
}

/** slapd in the foreground with these arguments, stopped at teardown; its LDAP URL. */
async function startSlapd(
  t: Test,
  args: string[],
  extraUrl = "",
): Promise<{ url: string; port: number }> {
  const port = await freePort();
  const url = `ldap://127.0.0.1:${port}/`;
  const slapd = spawn("slapd", [...args, "-h", `${url} ${extraUrl}`.trim(), "-d", "none"], {
    stdio: "ignore",
  });
  t.teardown(async () => {
    slapd.kill();
    await new Promise((resolve) => slapd.once("exit", resolve));
  });
  return { url, port };
}

/**
 * annal's configuration block from the guide, against the server at `port`, then annal's
 * capture: the first start imports, a write made after it is captured at once (the watch
 * delivers), by the one who made it, and nothing was worth a warning.
 */
async function annalCaptures(t: Test, port: number, passwords: { annal: string; admin: string }) {
  const toml = (await checkedBlock("openldap-annal.toml")).replace(
    "ldap://127.0.0.1:389",
    `ldap://127.0.0.1:${port}`,
  );
  const config = parseConfig(toml, {
    path: "annal.toml",
    env: { LDAP_PASSWORD: passwords.annal },
  });
  const settings = config.directory!;
  const directory = createDirectoryClient({
    url: settings.url,
    bindDN: settings.bindDN,
    password: settings.password,
  });
  t.teardown(() => directory.close());
  const admin = createDirectoryClient({
    url: settings.url,
    bindDN: ADMIN,
    password: passwords.admin,
  });
  t.teardown(() => admin.close());
  await eventually(
    async () => (await directory.get(settings.base).catch(() => undefined)) !== undefined,
    { what: "slapd answers annal's bind" },
  );
  const db = await testDatabase(t);
  const projector = await Projector.start({
    pool: db.pool,
    projections: allProjections,
    log: { info() {}, warn() {}, error() {} },
  });
  t.teardown(() => projector.stop());
  const warnings: string[] = [];
  const log = {
    info() {},
    debug() {},
    warn: (...args: unknown[]) => warnings.push(String(args.at(-1))),
    error: (...args: unknown[]) => warnings.push(String(args.at(-1))),
  };
  const context = {
    pool: db.pool,
    store: await EventStore.open(db.pool),
    directory,
    normalizer: createNormalizer(await loadDirectorySchema(directory), {
      ...settings,
      types: DEMO_TYPES,
    }),
    base: settings.base,
    log,
  };
  const worker = await startCaptureWorker(context, { ...settings.capture, interval: 60_000 });
  t.teardown(() => worker.stop());
  await eventually(async () => worker.watched(), {
    what: "the accesslog watch delivers (syncprov)",
  });
  const dn = "uid=ada,ou=people,dc=example,dc=org";
  await admin.add(dn, { objectClass: ["inetOrgPerson"], uid: "ada", cn: "Ada", sn: "Lovelace" });
  const change = await eventually(async () =>
    (await feed(db.pool)).find((c) => c.dn === dn && c.change_type === "add"),
  );
  t.equal(change.actor, ADMIN, "captured with who made it");
  t.same(warnings, [], "nothing to warn about: the index is there, the sources readable");
  t.match(
    await readAccesslogIndexes(context),
    { readable: true, missing: [] },
    "annal's account reads the accesslog's indexes in cn=config",
  );
}

t.test("the guide's slapd.conf serves annal's capture as it is printed", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "annal-guide-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const passwords = { annal: "annal-secret", admin: "admin-secret" };
  const conf = (await checkedBlock("openldap-slapd.conf"))
    .replaceAll("/var/lib/ldap/", `${dir}/`)
    .replace("/var/run/slapd/slapd.pid", join(dir, "slapd.pid"))
    .replace("{SSHA}your-hash-from-slappasswd", sshaPassword(passwords.admin));
  await mkdir(join(dir, "accesslog"));
  await mkdir(join(dir, "data"));
  await writeFile(join(dir, "slapd.conf"), conf);
  await slapadd(["-f", join(dir, "slapd.conf")], seedLdif(passwords.annal));
  const { port } = await startSlapd(t, ["-f", join(dir, "slapd.conf")]);
  await annalCaptures(t, port, passwords);
});

t.test(
  "the guide's cn=config changes, applied with its ldapmodify, serve annal's capture",
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), "annal-guide-"));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const passwords = { annal: "annal-secret", admin: "admin-secret" };
    // A server as a distribution sets one up: cn=config, root managing it over the local socket,
    // one data database ({1}mdb), no accesslog.
    const bootstrap = [
      "include /etc/ldap/schema/core.schema",
      "include /etc/ldap/schema/cosine.schema",
      "include /etc/ldap/schema/nis.schema",
      "include /etc/ldap/schema/inetorgperson.schema",
      "modulepath /usr/lib/ldap",
      "moduleload back_mdb",
      `pidfile ${join(dir, "slapd.pid")}`,
      "database config",
      "access to * by dn.exact=gidNumber=0+uidNumber=0,cn=peercred,cn=external,cn=auth manage by * break",
      "database mdb",
      'suffix "dc=example,dc=org"',
      `rootdn "${ADMIN}"`,
      `rootpw ${sshaPassword(passwords.admin)}`,
      `directory ${join(dir, "data")}`,
      "index objectClass,entryUUID,modifyTimestamp eq",
      "access to attrs=userPassword by self write by anonymous auth by * none",
      "access to * by users write by * read",
      "",
    ].join("\n");
    await mkdir(join(dir, "data"));
    await mkdir(join(dir, "slapd.d"));
    await writeFile(join(dir, "bootstrap.conf"), bootstrap);
    // Loaded first: slaptest opens the databases read-only, and converts once they exist.
    await slapadd(["-f", join(dir, "bootstrap.conf")], seedLdif(passwords.annal));
    await run("slaptest", ["-f", join(dir, "bootstrap.conf"), "-F", join(dir, "slapd.d")]);
    const socket = `ldapi://${encodeURIComponent(join(dir, "ldapi"))}`;
    const { port } = await startSlapd(t, ["-F", join(dir, "slapd.d")], socket);
    await eventually(
      async () =>
        (await run("ldapsearch", [
          "-Y",
          "EXTERNAL",
          "-H",
          socket,
          "-b",
          "cn=config",
          "-s",
          "base",
          "-Q",
        ]).then(
          () => true,
          () => false,
        )) || undefined,
      { what: "slapd answers on its socket" },
    );

    await mkdir(join(dir, "accesslog"));
    const ldif = (await checkedBlock("openldap-config.ldif")).replaceAll(
      "/var/lib/ldap/",
      `${dir}/`,
    );
    await writeFile(join(dir, "annal-accesslog.ldif"), ldif);
    const [command, ...args] = (await checkedBlock("openldap-ldapmodify"))
      .trim()
      .replace("ldapi:///", socket)
      .split(/\s+/);
    t.equal(command, "ldapmodify");
    await run(command!, args, { cwd: dir });
    await annalCaptures(t, port, passwords);
  },
);

/** `text` with `from` replaced by `to`; the block must have `from` (a put-in that finds nothing fails). */
function putIn(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`the guide's block has no ${JSON.stringify(from)}`);
  return text.replaceAll(from, to);
}

const MODIFYTIMESTAMP_INDEX =
  "cn=modifytimestamp,cn=index,cn=userRoot,cn=ldbm database,cn=plugins,cn=config";

/** The Directory Manager's password in a file of `dir`, for the guide's `-W` and dsconf's `-y`. */
async function passwordFile(ds: Dirsrv, dir: string): Promise<string> {
  const file = join(dir, "directory-manager.pw");
  await writeFile(file, ds.password, { mode: 0o600 });
  return file;
}

/** The guide's 389 command for an LDAP tool, against the test's server, as the shell runs it. */
async function run389(ds: Dirsrv, dir: string, command: string): Promise<string> {
  const line = putIn(
    putIn(command.trim(), "ldap://localhost:389", ds.url),
    " -W ",
    ` -y ${await passwordFile(ds, dir)} `,
  );
  return (await run("/bin/sh", ["-c", line], { cwd: dir })).stdout;
}

/** An LDIF block of the guide, applied with the guide's ldapmodify under `file`'s name. */
async function ldapmodify389(ds: Dirsrv, dir: string, file: string, ldif: string): Promise<void> {
  await writeFile(join(dir, file), ldif);
  const command = await checkedBlock("389-ldapmodify");
  await run389(ds, dir, putIn(command, "annal-389-plugins.ldif", file));
}

/** An attribute's first value as text, in whatever case the server names the attribute. */
function first(entry: DirectoryEntry | undefined, name: string): string | undefined {
  const found = Object.entries(entry?.attributes ?? {}).find(
    ([attribute]) => attribute.toLowerCase() === name.toLowerCase(),
  );
  const value = found?.[1][0];
  return value === undefined ? undefined : value.toString();
}

/** Every entry under the base, by DN, with its entryUUID (undefined where it has none). */
async function entryUUIDs(directory: DirectoryClient, base: string) {
  const found = new Map<string, string | undefined>();
  for await (const page of directory.search(base, {
    scope: "sub",
    filter: present("objectClass"),
    attributes: ["entryUUID"],
  })) {
    for (const entry of page) found.set(entry.dn, first(entry, "entryUUID"));
  }
  return found;
}

/**
 * Poll capture's search (`modifyTimestamp` since `since`, which names the search in the access
 * log), and what 389 made of it: how many entries it found, and whether it served it from an
 * index (389 marks a search it could not `notes=U` in its access log, which the test has it
 * write unbuffered).
 */
async function pollSearch(
  ds: Dirsrv,
  directory: DirectoryClient,
  since: Date,
): Promise<{ found: number; indexed: boolean }> {
  let found = 0;
  for await (const page of directory.search(ds.base, {
    scope: "sub",
    filter: modifiedSince(since),
    attributes: ["1.1"],
  })) {
    found += page.length;
  }
  const accessLog = join(dirsrvPaths(ds.dataDir).log, "access");
  const filter = `(modifyTimestamp>=${pollTime(since)})`.toLowerCase();
  const result = await eventually(
    async () => {
      const lines = (await readFile(accessLog, "utf8")).split("\n");
      const search = lines.find((line) => line.toLowerCase().includes(`filter="${filter}"`));
      const operation = search && /conn=\d+ op=\d+ /.exec(search)?.[0];
      return operation && lines.find((line) => line.includes(`${operation}RESULT `));
    },
    { what: `389 logs the result of the search for ${filter}` },
  );
  return { found, indexed: !/notes=[A-Z,]*U/.test(result) };
}

/** Waits for a 389 task's entry to say it ended, and returns its exit code. */
async function taskEnded(directory: DirectoryClient, dn: string): Promise<string> {
  return eventually(
    async () =>
      first(await directory.get(dn, { attributes: ["nsTaskExitCode"] }), "nsTaskExitCode"),
    { what: `the task ${dn} ends` },
  );
}

const PEOPLE_389 = [
  "dn: ou=former,dc=example,dc=org\nobjectClass: organizationalUnit\nou: former\n",
  "dn: uid=ada,ou=people,dc=example,dc=org\nobjectClass: inetOrgPerson\nuid: ada\ncn: Ada\nsn: Lovelace\n",
  "dn: uid=bob,ou=people,dc=example,dc=org\nobjectClass: inetOrgPerson\nuid: bob\ncn: Bob\nsn: Builder\n",
].join("\n");

t.test(
  "the guide's 389 LDIF, applied with its ldapmodify, serves annal's capture from the Retro Changelog",
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), "annal-guide-"));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    // 389 as a new instance is: no changelog, no entryUUID (its first start), no annal account.
    const ds = await startDirsrv({ entryUUID: false, changelog: false, seedLdif: PEOPLE_389 });
    t.teardown(() => ds.stop());
    const manager = createDirectoryClient({
      url: ds.url,
      bindDN: ds.bindDN,
      password: ds.password,
    });
    t.teardown(() => manager.close());
    // Limits far below 389's defaults (2,000 entries, 5,000 looked through), so that the import
    // holds the account's own: without them it would end at the second entry. And the access
    // log unbuffered, to read what 389 notes of each search.
    await manager.modify("cn=config", [
      { operation: "replace", attribute: "nsslapd-sizelimit", values: "2" },
      { operation: "replace", attribute: "nsslapd-accesslog-logbuffering", values: "off" },
    ]);
    await manager.modify("cn=config,cn=ldbm database,cn=plugins,cn=config", [
      { operation: "replace", attribute: "nsslapd-lookthroughlimit", values: "2" },
    ]);
    const stock = await directoryCaptureFixture(t, { server: ds, source: "changelog" });
    await t.rejects(
      captureOnce(stock.context, "changelog"),
      { code: "ANNAL_CAPTURE_SOURCE_MISSING" },
      "before the guide, capture from the changelog is refused",
    );
    t.match(
      await pollSearch(ds, manager, new Date("2001-01-01T00:00:01Z")),
      { indexed: false },
      "before the guide, 389 reads every entry for a poll",
    );
    t.ok(
      [...(await entryUUIDs(manager, ds.base)).values()].every((uuid) => uuid === undefined),
      "before the guide, no entry has an entryUUID",
    );

    await ldapmodify389(ds, dir, "annal-389-plugins.ldif", await checkedBlock("389-plugins.ldif"));
    await ds.restart();
    await ldapmodify389(
      ds,
      dir,
      "annal-389-fixup.ldif",
      await checkedBlock("389-entryuuid-fixup.ldif"),
    );
    const status = await eventually(
      async () => {
        const out = await run389(ds, dir, await checkedBlock("389-task-status"));
        return /^nsTaskExitCode: /m.test(out) ? out : undefined;
      },
      { what: "the guide's ldapsearch shows the fixup ended" },
    );
    t.match(status, /^nsTaskExitCode: 0$/m, "the fixup succeeded");
    const annalPassword = "annal-secret";
    await ldapmodify389(
      ds,
      dir,
      "annal-389-account.ldif",
      putIn(await checkedBlock("389-account.ldif"), "choose-a-long-password", annalPassword),
    );
    await ldapmodify389(
      ds,
      dir,
      "annal-389-poll-index.ldif",
      await checkedBlock("389-poll-index.ldif"),
    );
    t.equal(
      await taskEnded(manager, "cn=annal modifytimestamp index,cn=index,cn=tasks,cn=config"),
      "0",
      "the reindex succeeded",
    );

    const port = new URL(ds.url).port;
    const toml = putIn(
      await checkedBlock("389-annal.toml"),
      "ldap://127.0.0.1:389",
      `ldap://127.0.0.1:${port}`,
    );
    const settings = parseConfig(toml, {
      path: "annal.toml",
      env: { LDAP_PASSWORD: annalPassword },
    }).directory!;
    t.equal(settings.bindDN, ANNAL, "annal binds as the guide's account");
    const f = await directoryCaptureFixture(t, {
      server: {
        url: settings.url,
        bindDN: settings.bindDN,
        password: settings.password,
        base: settings.base,
      },
      source: settings.capture.source,
      identity: settings.identity,
    });
    await f.sync();
    const inDirectory = await entryUUIDs(manager, ds.base);
    t.ok(inDirectory.size > 2, "more entries than the server's limits let an account read");
    t.ok(
      [...inDirectory.values()].every((uuid) => uuid !== undefined),
      "after the fixup, every entry has an entryUUID",
    );
    const imported = await f.db.pool.query<{ dn: string; entry_uuid: string }>(
      "SELECT dn, entry_uuid FROM projection_entries.entries",
    );
    t.same(
      new Map(imported.rows.map((row) => [row.dn, row.entry_uuid])),
      inDirectory,
      "annal's account imported every entry, each by its entryUUID",
    );

    const ada = "uid=ada,ou=people,dc=example,dc=org";
    const bob = "uid=bob,ou=people,dc=example,dc=org";
    await manager.modify(ada, [{ operation: "replace", attribute: "title", values: "Engineer" }]);
    // annal's own writes, as ada (proxied authorization): a modify, and a move to another parent.
    const asAda = { as: ada };
    await f.directory.modify(
      bob,
      [{ operation: "replace", attribute: "title", values: "Gone" }],
      asAda,
    );
    await f.directory.modifyDN(bob, "uid=bob", {
      newSuperior: "ou=former,dc=example,dc=org",
      ...asAda,
    });
    await f.sync();
    const changes = (await feed(f.db.pool)).map((c) => ({
      change_type: c.change_type,
      dn: c.dn,
      entry_uuid: c.entry_uuid,
      actor: String(c.actor).toLowerCase(),
    }));
    t.same(
      changes,
      [
        {
          change_type: "modify",
          dn: ada,
          entry_uuid: inDirectory.get(ada),
          actor: "cn=directory manager",
        },
        { change_type: "modify", dn: bob, entry_uuid: inDirectory.get(bob), actor: ANNAL },
        {
          change_type: "modrdn",
          dn: "uid=bob,ou=former,dc=example,dc=org",
          entry_uuid: inDirectory.get(bob),
          actor: ANNAL,
        },
      ],
      "the changes after the import, each by its entry's entryUUID; 389 names annal's bind DN, not the one it acted as",
    );
    t.equal(await f.sync(), 0, "nothing more to capture");

    t.same(
      await pollSearch(ds, f.directory, new Date("2001-01-01T00:00:02Z")),
      { found: inDirectory.size, indexed: true },
      "after the guide, 389 serves annal's poll from the modifyTimestamp index",
    );
    const index = await manager.get(MODIFYTIMESTAMP_INDEX, { attributes: ["nsIndexType"] });
    t.equal(first(index, "nsIndexType"), "eq", "an equality index of modifyTimestamp");
  },
);

t.test("the guide's dsconf commands make the same changes", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "annal-guide-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const ds = await startDirsrv({ entryUUID: false, changelog: false, seedLdif: PEOPLE_389 });
  t.teardown(() => ds.stop());
  const manager = createDirectoryClient({ url: ds.url, bindDN: ds.bindDN, password: ds.password });
  t.teardown(() => manager.close());
  await manager.modify("cn=config", [
    { operation: "replace", attribute: "nsslapd-accesslog-logbuffering", values: "off" },
  ]);
  const dsconf = `dsconf -D "${ds.bindDN}" -y ${await passwordFile(ds, dir)} ${ds.url.replace(/\/$/, "")} `;
  for (const line of (await checkedBlock("389-dsconf")).trim().split("\n")) {
    if (line === "dsctl example restart") await ds.restart();
    else await run("/bin/sh", ["-c", putIn(line, "dsconf example ", dsconf)], { cwd: dir });
  }

  const inDirectory = await entryUUIDs(manager, ds.base);
  t.ok(
    [...inDirectory.values()].every((uuid) => uuid !== undefined),
    "after the fixup, every entry has an entryUUID",
  );
  const root = await manager.get("", { attributes: ["changelog"] });
  t.equal(first(root, "changelog"), "cn=changelog", "the Retro Changelog runs");
  const ada = "uid=ada,ou=people,dc=example,dc=org";
  await manager.modify(ada, [{ operation: "replace", attribute: "title", values: "Engineer" }]);
  const adaNames = await manager.get(ada, { attributes: ["entryUUID", "nsUniqueId"] });
  const last = first(
    await manager.get("", { attributes: ["lastchangenumber"] }),
    "lastchangenumber",
  );
  const record = await manager.get(`changenumber=${last},cn=changelog`, {
    attributes: ["targetDn", "targetEntryUUID", "targetUniqueId"],
  });
  t.equal(first(record, "targetDn"), ada);
  t.equal(
    first(record, "targetEntryUUID"),
    first(adaNames, "entryUUID"),
    "logged with its entryUUID",
  );
  t.equal(first(record, "targetUniqueId"), first(adaNames, "nsUniqueId"), "and its nsUniqueId");
  t.match(
    await pollSearch(ds, manager, new Date("2001-01-01T00:00:03Z")),
    { indexed: true },
    "389 serves a poll from the modifyTimestamp index",
  );
});

t.test(
  "the guide's AD configuration, the example's as printed, imports the domain over verified LDAPS",
  async (t) => {
    const block = await checkedBlock("ad-annal.toml");
    const example = await readFile(
      join(import.meta.dirname, "../../ops/examples/ad/annal.toml"),
      "utf8",
    );
    t.ok(example.includes(block), "ops/examples/ad/annal.toml holds the block as printed");
    const people = "OU=People,DC=example,DC=test";
    const dc = await startSambaDC({
      seedLdif: toLdif([
        adOrganizationalUnit("People"),
        adUser("ada", { parent: people, attributes: { sn: ["Lovelace"] } }),
        { dn: `CN=carl,${people}`, attributes: { objectClass: ["contact"], cn: ["carl"] } },
        adGroup("team", [`CN=ada,${people}`, `CN=carl,${people}`], { parent: people }),
      ]),
    });
    t.teardown(() => dc.stop());
    const config = parseConfig(block, {
      path: "annal.toml",
      env: {
        AD_URL: dc.url,
        AD_BIND_DN: dc.bindDN,
        LDAP_PASSWORD: dc.password,
        AD_CA_FILE: dc.caFile,
        AD_SERVER_NAME: dc.serverName,
      },
    });
    const settings = config.directory!;
    t.equal(settings.capture.source, "ad");
    const directory = createDirectoryClient({
      url: settings.url,
      bindDN: settings.bindDN,
      password: settings.password,
      ...(settings.tls ? { tls: settings.tls } : {}),
    });
    t.teardown(() => directory.close());
    const db = await testDatabase(t);
    const context = {
      pool: db.pool,
      store: await EventStore.open(db.pool),
      directory,
      normalizer: createNormalizer(await loadDirectorySchema(directory), settings),
      base: settings.base,
      log: { info() {}, warn() {}, error() {}, debug() {} },
    };
    await ensureImported(context, settings.capture.source);
    const typed = await db.pool.query<{ dn: string; type: string | null }>(
      `SELECT data->'state'->>'dn' AS dn, data->'state'->>'type' AS type
         FROM events WHERE type = 'EntrySnapshot'`,
    );
    const typeOf = new Map(typed.rows.map((row) => [row.dn.toLowerCase(), row.type]));
    const of = (dn: string) => typeOf.get(dn.toLowerCase());
    t.equal(of(`CN=ada,${people}`), "user");
    t.equal(of("CN=Administrator,CN=Users,DC=example,DC=test"), "user");
    t.equal(of(`CN=carl,${people}`), "contact");
    t.equal(of(`CN=team,${people}`), "group");
    t.equal(of(people), "organizationalUnit");
    t.equal(of("CN=Domain Admins,CN=Users,DC=example,DC=test"), "group");
    const computers = typed.rows.filter((row) => /^CN=DC1,OU=Domain Controllers,/i.test(row.dn));
    t.equal(computers.length, 1, "the DC's computer object is imported");
    t.not(computers[0]?.type, "user", "a computer is no user");
  },
);

t.test(
  "the guide's TLS blocks: ldaps:// and StartTLS to slapd behind a CA of its own, and the failure it prints",
  async (t) => {
    const pki = await testPki();
    t.teardown(() => pki.remove());
    const ca = await pki.ca("annal guide CA");
    const certificate = await pki.issue(ca, { commonName: "ldap.example.org" });
    const annalPassword = "annal-tls-secret";
    const slapd = await startTestSlapd({
      seedLdif: `dn: ${ANNAL}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\ncn: annal\nuserPassword: ${sshaPassword(annalPassword)}\n`,
      tls: { caFile: ca.certFile, ...certificate },
    });
    t.teardown(() => slapd.stop());
    const ldaps = slapd.ldapsUrl!.replace(/\/$/, "");
    const plain = slapd.url.replace(/\/$/, "");
    // Only the address, the ports and the CA file are put in.
    const put = (text: string) =>
      text
        .replaceAll("ldaps://192.0.2.10:636", ldaps)
        .replaceAll("ldap://192.0.2.10:389", plain)
        .replaceAll("192.0.2.10", "127.0.0.1")
        .replaceAll("/etc/annal/directory-ca.pem", ca.certFile);
    const directoryOf = (toml: string) => {
      const settings = parseConfig(toml, {
        path: "annal.toml",
        env: { LDAP_PASSWORD: annalPassword },
      }).directory!;
      const directory = createDirectoryClient({
        url: settings.url,
        bindDN: settings.bindDN,
        password: settings.password,
        ...(settings.tls ? { tls: settings.tls } : {}),
      });
      t.teardown(() => directory.close());
      return { settings, directory };
    };

    for (const name of ["tls-ldaps.toml", "tls-starttls.toml"]) {
      const { settings, directory } = directoryOf(put(await checkedBlock(name)));
      t.equal(settings.tls?.serverName, "ldap.example.org", `${name}: the name to check`);
      // annal's first start over it: the import reads every entry through TLS.
      const db = await testDatabase(t);
      const context = {
        pool: db.pool,
        store: await EventStore.open(db.pool),
        directory,
        normalizer: createNormalizer(await loadDirectorySchema(directory), settings),
        base: settings.base,
        log: { info() {}, warn() {}, error() {}, debug() {} },
      };
      await ensureImported(context, "poll");
      const imported = await db.pool.query("SELECT 1 FROM events WHERE type = 'EntrySnapshot'");
      t.ok(imported.rowCount! >= 4, `${name}: the import read the directory over TLS`);
    }

    // The first block without its serverName: the certificate names a host, annal connects
    // by address. What annal says is what the guide prints.
    const unnamed = (await checkedBlock("tls-ldaps.toml"))
      .split("\n")
      .filter((line) => !line.startsWith("serverName"))
      .join("\n");
    const { directory } = directoryOf(put(unnamed));
    const error = await directory.get("dc=example,dc=org").then(
      () => undefined,
      (error: unknown) => error,
    );
    t.match(error, { code: "ANNAL_LDAP_TLS_FAILED" });
    t.equal(
      `${failureLines(error).join("\n")}\n`,
      put(await checkedBlock("tls-failed")),
      "the guide prints what annal says",
    );
  },
);

t.test("every block the guide prints is checked, and each checked block is run here", async (t) => {
  const lines = (await readFile(GUIDE, "utf8")).split("\n");
  const source = await readFile(import.meta.filename, "utf8");
  const names: string[] = [];
  let open = false;
  lines.forEach((line, index) => {
    if (!line.startsWith("```")) return;
    open = !open;
    if (!open) return;
    // The line before a block is blank; the one before that names it.
    const marker = /^<!-- checked: (\S+) -->$/.exec(lines[index - 2] ?? "");
    t.ok(marker, `the block at line ${index + 1} (${line}) is checked`);
    if (marker) names.push(marker[1]!);
  });
  t.notOk(open, "every block is closed");
  t.ok(names.length >= 16, `${names.length} blocks`);
  t.equal(new Set(names).size, names.length, "each name once");
  for (const name of names) {
    t.ok(source.includes(`"${name}"`), `${name} is used by a test of this file`);
  }
});
