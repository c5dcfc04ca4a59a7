import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import t, { type Test } from "tap";
import { createNormalizer, startCaptureWorker } from "../../src/capture/index.ts";
import { readAccesslogIndexes } from "../../src/capture/accesslog-indexes.ts";
import { parseConfig } from "../../src/config/index.ts";
import { createDirectoryClient, loadDirectorySchema } from "../../src/directory/index.ts";
import { freePort } from "../../src/ports.ts";
import { sshaPassword } from "../../src/slapd/index.ts";
import { Projector } from "../../src/projector/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { allProjections } from "../../projections/index.ts";
import { DEMO_TYPES } from "../support/capture.ts";
import { eventually } from "../support/eventually.ts";
import { feed } from "../support/history.ts";
import { testDatabase } from "../support/postgres.ts";

/**
 * docs/connect-your-directory.md, held against real servers: every block it marks
 * `<!-- checked: name -->` is used as it is printed, with only paths, ports and passwords put
 * in, and annal then captures from the server so configured, with nothing to warn about.
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
