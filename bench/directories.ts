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
import { baseEntries, launchSlapd, SLAPD_BASE, SLAPD_ROOT_DN, toLdif } from "../src/slapd/index.ts";
import { EventStore } from "../src/store/index.ts";
import { startDirsrv } from "../test/support/dirsrv.ts";
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
 * The same directory on OpenLDAP (capture from its accesslog) and on 389 Directory Server
 * (capture from its Retro Changelog), in one run: annal's first-start import of `ENTRIES`
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
  stop(): Promise<void>;
}

interface Row {
  readonly server: string;
  readonly importSeconds: number;
  readonly searchSeconds: number;
  readonly lag: { p50: number; p99: number };
}

export async function directoriesBenchmark(): Promise<void> {
  const rows: Row[] = [];
  for (const start of [startOpenLdap, start389]) {
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
    `## Every directory: OpenLDAP and 389 Directory Server side by side

\`npm run bench -- directories${sizeOption()}\` · ${new Date().toISOString().slice(0, 10)} · ${machine()}

${fmt(ENTRIES)} people. The import is annal's first start (\`ensureImported\`: one transaction,
snapshots and checkpoint); the baseline a paged \`ldapsearch\` of the same entries from the same
server in the same run. The lag is from a write's answer to its event in the log, ${LAG_SAMPLES}
writes one after another, with the capture worker as \`annal start\` runs it (interval
${INTERVAL} ms): slapd's accesslog watch wakes capture at once; 389's Retro Changelog is read
every interval (389 offers no persistent search on it that annal uses).

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
    stop: () => ds.stop(),
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
        SLAPD_BASE,
        "-E",
        "pr=500/noprompt",
        "(objectClass=*)",
        "*",
        "+",
      ],
      { maxBuffer: 1 << 30 },
    ),
  );
  const db = await benchDatabase();
  const directory = createDirectoryClient({
    url: server.url,
    bindDN: server.bindDN,
    password: server.password,
    timeoutMs: 60_000,
  });
  try {
    const context: CaptureContext = {
      pool: db.pool,
      store: await EventStore.open(db.pool),
      directory,
      normalizer: createNormalizer(await loadDirectorySchema(directory), {
        types: [
          { name: "user", base: `ou=people,${SLAPD_BASE}`, filter: "(objectClass=inetOrgPerson)" },
        ],
        capture: { redact: [...BUILT_IN_REDACTED_ATTRIBUTES] },
      }),
      base: SLAPD_BASE,
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
        await directory.modify(people[i]!.dn, [
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
