import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { BUILT_IN_REDACTED_ATTRIBUTES } from "../src/config/index.ts";
import {
  createNormalizer,
  ensureImported,
  startCaptureWorker,
  type CaptureContext,
  type CaptureSource,
} from "../src/capture/index.ts";
import { createDirectoryClient, loadDirectorySchema } from "../src/directory/index.ts";
import {
  baseEntries,
  launchSlapd,
  SLAPD_BASE,
  SLAPD_ROOT_DN,
  toLdif,
  toLdifChunks,
} from "../src/slapd/index.ts";
import { EventStore } from "../src/store/index.ts";
import { startDirsrv } from "../test/support/dirsrv.ts";
import { adOrganizationalUnit, adUser, startSambaDC } from "../test/support/samba.ts";
import {
  benchDatabase,
  benchSize,
  fmt,
  machine,
  percentile,
  recordResults,
  sizeOption,
  time,
} from "./support.ts";

/**
 * The same directory on OpenLDAP (capture from its accesslog), on 389 Directory Server
 * (capture from its Retro Changelog) and on Samba's Active Directory domain controller (over
 * LDAPS, capture by uSNChanged), in one run: annal's first-start import of `ENTRIES`
 * people against a paged `ldapsearch` of the same entries on the same server (the baseline),
 * and the capture lag of a write (from the write's answer to its event in the log) with the
 * capture worker as `annal start` runs it (interval 250 ms: slapd's accesslog watch wakes
 * capture at once, 389's changelog is read every interval).
 */
const ENTRIES = benchSize(10_000);
const LAG_SAMPLES = 200;
const INTERVAL = 250;
const run = promisify(execFile);
const quiet = { info() {}, warn() {}, error() {}, debug() {} };

const people = Array.from({ length: ENTRIES }, (_, i) => ({
  dn: `uid=user${i},ou=people,${SLAPD_BASE}`,
  attributes: {
    objectClass: ["inetOrgPerson"],
    uid: [`user${i}`],
    cn: [`User ${i}`],
    sn: [`Number${i}`],
    mail: [`user${i}@example.org`],
  },
}));

interface Server {
  readonly name: string;
  readonly source: CaptureSource;
  readonly url: string;
  readonly bindDN: string;
  readonly password: string;
  /** The naming context, the people's parent, their type's filter, and their DNs. */
  readonly base: string;
  readonly peopleBase: string;
  readonly peopleFilter: string;
  readonly people: readonly string[];
  readonly tls?: { readonly caFile: string; readonly serverName: string };
  /** The page size of the baseline's `ldapsearch -E pr=`: AD's MaxPageSize is 1,000. */
  readonly pageSize: number;
  stop(): Promise<void>;
}

const SLAPD_PEOPLE = people.map((person) => person.dn);

interface Row {
  readonly server: string;
  readonly importSeconds: number;
  readonly searchSeconds: number;
  readonly lag: { p50: number; p99: number };
}

export async function directoriesBenchmark(): Promise<void> {
  const rows: Row[] = [];
  for (const start of [startOpenLdap, start389, startSamba]) {
    const server = await start();
    try {
      rows.push(await measure(server));
    } finally {
      await server.stop();
    }
  }
  const table = rows
    .map(
      (row) =>
        `| ${row.server} | ${fmt(ENTRIES / row.importSeconds)} | ${fmt(ENTRIES / row.searchSeconds)} | ${fmt(row.searchSeconds / row.importSeconds, 2)} | ${fmt(row.lag.p50, 1)} | ${fmt(row.lag.p99, 1)} |`,
    )
    .join("\n");
  recordResults(
    "directories",
    `## Every directory: OpenLDAP, 389 Directory Server and Active Directory side by side

\`npm run bench -- directories${sizeOption()}\` · ${new Date().toISOString().slice(0, 10)} · ${machine()}

${fmt(ENTRIES)} people. The import is annal's first start (\`ensureImported\`: one transaction,
snapshots and checkpoint); the baseline a paged \`ldapsearch\` of the same entries from the same
server in the same run. The lag is from a write's answer to its event in the log, ${LAG_SAMPLES}
writes one after another, with the capture worker as \`annal start\` runs it (interval
${INTERVAL} ms): slapd's accesslog watch wakes capture at once; 389's Retro Changelog is read
every interval (389 offers no persistent search on it that annal uses). Samba's AD DC holds
the same people as users, loaded with ldbadd before it starts, read over LDAPS (its own CA)
in pages of 1,000 (AD's MaxPageSize), with the domain's own few hundred objects beside them
(the rates count the people only); capture asks it for \`uSNChanged\` past its checkpoint every
interval.

| server (capture source) | import, entries/s | ldapsearch, entries/s | import ÷ ldapsearch | lag p50 ms | lag p99 ms |
|---|---|---|---|---|---|
${table}
`,
  );
}

async function startOpenLdap(): Promise<Server> {
  const password = randomBytes(12).toString("base64url");
  const slapd = await launchSlapd({
    dir: mkdtempSync(path.join(os.tmpdir(), "annal-bench-slapd-")),
    rootPassword: password,
    seedLdif: () => toLdif([...baseEntries(), ...people]),
    removeOnStop: true,
    startTimeoutMs: 600_000,
  });
  return {
    name: "OpenLDAP (accesslog)",
    source: "accesslog",
    url: slapd.url,
    bindDN: SLAPD_ROOT_DN,
    password,
    base: SLAPD_BASE,
    peopleBase: `ou=people,${SLAPD_BASE}`,
    peopleFilter: "(objectClass=inetOrgPerson)",
    people: SLAPD_PEOPLE,
    pageSize: 500,
    stop: () => slapd.stop(),
  };
}

async function start389(): Promise<Server> {
  const ds = await startDirsrv({ changelog: true, seedLdif: toLdif(people) });
  return {
    name: "389 Directory Server (changelog)",
    source: "changelog",
    url: ds.url,
    bindDN: ds.bindDN,
    password: ds.password,
    base: SLAPD_BASE,
    peopleBase: `ou=people,${SLAPD_BASE}`,
    peopleFilter: "(objectClass=inetOrgPerson)",
    people: SLAPD_PEOPLE,
    pageSize: 500,
    stop: () => ds.stop(),
  };
}

/**
 * Samba's AD DC with the same people as users (OU=People, loaded with ldbadd before it starts),
 * over LDAPS verified against its own CA, as annal reads AD (ops/examples/ad).
 */
async function startSamba(): Promise<Server> {
  const ou = "OU=People,DC=example,DC=test";
  const users = people.map((person, i) =>
    adUser(`user${i}`, {
      parent: ou,
      attributes: {
        sn: person.attributes.sn,
        mail: person.attributes.mail,
        displayName: person.attributes.cn,
      },
    }),
  );
  const dc = await startSambaDC({
    seedLdif: toLdifChunks([adOrganizationalUnit("People"), ...users]),
  });
  return {
    name: "Samba AD DC (ad)",
    source: "ad",
    url: dc.url,
    bindDN: dc.bindDN,
    password: dc.password,
    base: dc.base,
    peopleBase: ou,
    peopleFilter: "(&(objectClass=user)(!(objectClass=computer)))",
    people: users.map((user) => user.dn),
    tls: { caFile: dc.caFile, serverName: dc.serverName },
    pageSize: 1000,
    stop: () => dc.stop(),
  };
}

async function measure(server: Server): Promise<Row> {
  process.stderr.write(`bench: directories: ${server.name}\n`);
  const searchSeconds = await time(() =>
    run(
      "ldapsearch",
      [
        "-x",
        "-LLL",
        "-H",
        server.url,
        "-D",
        server.bindDN,
        "-w",
        server.password,
        "-b",
        server.base,
        "-E",
        `pr=${server.pageSize}/noprompt`,
        "(objectClass=*)",
        "*",
        "+",
      ],
      {
        maxBuffer: 1 << 30,
        // Over LDAPS, the DC's own CA. Its certificate names the DC's host name and the
        // server is reached by address, which libldap cannot be told to check instead: the
        // certificate is asked for and checked against the CA by annal, not by ldapsearch.
        ...(server.tls
          ? {
              env: { ...process.env, LDAPTLS_CACERT: server.tls.caFile, LDAPTLS_REQCERT: "allow" },
            }
          : {}),
      },
    ),
  );
  const db = await benchDatabase();
  const directory = createDirectoryClient({
    url: server.url,
    bindDN: server.bindDN,
    password: server.password,
    timeoutMs: 60_000,
    ...(server.tls ? { tls: server.tls } : {}),
  });
  try {
    const context: CaptureContext = {
      pool: db.pool,
      store: await EventStore.open(db.pool),
      directory,
      normalizer: createNormalizer(await loadDirectorySchema(directory), {
        types: [{ name: "user", base: server.peopleBase, filter: server.peopleFilter }],
        capture: { redact: [...BUILT_IN_REDACTED_ATTRIBUTES] },
      }),
      base: server.base,
      log: quiet,
    };
    const importSeconds = await time(() => ensureImported(context, server.source));
    const worker = await startCaptureWorker(context, {
      source: server.source,
      interval: INTERVAL,
      reconcileInterval: 600_000,
      snapshotInterval: 0,
    });
    const lags: number[] = [];
    try {
      for (let i = 0; i < LAG_SAMPLES; i++) {
        const before = await head(context);
        await directory.modify(server.people[i]!, [
          { operation: "replace", attribute: "title", values: `Title ${i}` },
        ]);
        const written = performance.now();
        // Polled every 2 ms: the figure is the lag, not the poll.
        while ((await head(context)) === before) await new Promise((r) => setTimeout(r, 2));
        lags.push(performance.now() - written);
      }
    } finally {
      await worker.stop();
    }
    lags.sort((a, b) => a - b);
    return {
      server: server.name,
      importSeconds,
      searchSeconds,
      lag: { p50: percentile(lags, 50), p99: percentile(lags, 99) },
    };
  } finally {
    await directory.close();
    await db.close();
  }
}

async function head(context: CaptureContext): Promise<string> {
  const result = await context.pool.query<{ position: string | null }>(
    "SELECT max(position)::text AS position FROM events",
  );
  return result.rows[0]?.position ?? "";
}
