import { BUILT_IN_REDACTED_ATTRIBUTES } from "../../src/config/index.ts";
import {
  captureOnce,
  createNormalizer,
  type CaptureContext,
  type CaptureSource,
} from "../../src/capture/index.ts";
import type { Pool } from "../../src/db/index.ts";
import {
  createDirectoryClient,
  type DirectoryClient,
  type DirectoryClientOptions,
  type IdentitySetting,
} from "../../src/directory/index.ts";
import { loadDirectorySchema } from "../../src/directory/schema.ts";
import { Projector, waitForProjection } from "../../src/projector/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { allProjections } from "../../projections/index.ts";
import { startSlapd, type Slapd } from "./slapd.ts";
import { testDatabase, type TestDatabase } from "./postgres.ts";

/** The attributes of an inetOrgPerson `uid`, for a test to add, with `extra` on top. */
export const person = (uid: string, extra: Record<string, string | string[]> = {}) => ({
  objectClass: ["inetOrgPerson"],
  uid,
  cn: `${uid} Example`,
  sn: "Example",
  ...extra,
});

/** The backends holding capture's advisory lock (src/capture/worker.ts): at most one. */
export async function captureLockHolders(pool: Pool): Promise<number[]> {
  const result = await pool.query<{ pid: number }>(
    `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
        AND objid = hashtext('annal:capture')::oid`,
  );
  return result.rows.map((row) => row.pid);
}

/** LDIF of `count` people, `uid=p0` on, under ou=people of the test directory. */
export function peopleLdif(count: number): string {
  return Array.from(
    { length: count },
    (_, i) => `dn: uid=p${i},ou=people,dc=example,dc=org
objectClass: inetOrgPerson
uid: p${i}
cn: Person ${i}
sn: Number${i}
`,
  ).join("\n");
}

export const quietLog = { info() {}, warn() {}, error() {}, debug() {} };

export const DEMO_TYPES = [
  { name: "user", base: "ou=people,dc=example,dc=org", filter: "(objectClass=inetOrgPerson)" },
  { name: "group", base: "ou=groups,dc=example,dc=org", filter: "(objectClass=groupOfNames)" },
];

export interface CaptureFixture extends DirectoryCaptureFixture {
  readonly slapd: Slapd;
}

/** Capture wired to a real directory server and a database of the test's own. */
export interface DirectoryCaptureFixture {
  readonly db: TestDatabase;
  readonly store: EventStore;
  readonly directory: DirectoryClient;
  readonly context: CaptureContext;
  /** One capture pass, then waits until every projection shows what it recorded. */
  sync(options?: { reconcile?: boolean }): Promise<number>;
  /** Starts the projector (not running until then, so a test can stop and restart it). */
  startProjector(): Promise<Projector>;
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** A real slapd, a database of the test's own, capture and the projections, wired together. */
export async function captureFixture(
  t: Teardown,
  options: {
    source?: CaptureSource;
    seedLdif?: string;
    redact?: string[];
    /** The slapd's `syncprov` overlay on its accesslog (default true). */
    syncprov?: boolean;
    /** What the slapd's accesslog indexes (default: what capture needs, and more). */
    accesslogIndexed?: readonly string[];
  } = {},
): Promise<CaptureFixture> {
  const slapd = await startSlapd({
    ...(options.seedLdif ? { seedLdif: options.seedLdif } : {}),
    ...(options.syncprov === undefined ? {} : { syncprov: options.syncprov }),
    ...(options.accesslogIndexed ? { accesslogIndexed: options.accesslogIndexed } : {}),
  });
  t.teardown(() => slapd.stop());
  const wired = await directoryCaptureFixture(t, {
    server: slapd,
    source: options.source ?? "accesslog",
    ...(options.redact ? { redact: options.redact } : {}),
  });
  return { slapd, ...wired };
}

/**
 * Capture from any directory server the test started (slapd, 389, AD), with a database of the
 * test's own and the projections, wired together as annal wires them.
 */
export async function directoryCaptureFixture(
  t: Teardown,
  options: {
    server: {
      readonly url: string;
      readonly bindDN: string;
      readonly password: string;
      readonly base: string;
      /** TLS to the server (ldaps, a CA and a name to check: Samba's AD DC). */
      readonly tls?: DirectoryClientOptions["tls"];
    };
    source: CaptureSource;
    redact?: string[];
    identity?: IdentitySetting;
    /** The entry types (default: the demo's, for `dc=example,dc=org`). */
    types?: typeof DEMO_TYPES;
  },
): Promise<DirectoryCaptureFixture> {
  const { server, source } = options;
  const db = await testDatabase(t);
  const store = await EventStore.open(db.pool);
  const directory = createDirectoryClient({
    url: server.url,
    bindDN: server.bindDN,
    password: server.password,
    ...(server.tls ? { tls: server.tls } : {}),
  });
  t.teardown(() => directory.close());
  const schema = await loadDirectorySchema(directory);
  const normalizer = createNormalizer(schema, {
    types: options.types ?? DEMO_TYPES,
    ...(options.identity ? { identity: options.identity } : {}),
    capture: {
      source,
      interval: 2000,
      reconcileInterval: 600_000,
      snapshotInterval: 0,
      redact: [...BUILT_IN_REDACTED_ATTRIBUTES, ...(options.redact ?? [])],
    },
  });
  const context: CaptureContext = {
    pool: db.pool,
    store,
    directory,
    normalizer,
    base: server.base,
    log: quietLog,
  };
  let projector: Projector | undefined;
  t.teardown(() => projector?.stop());
  const startProjector = async () => {
    projector = await Projector.start({
      pool: db.pool,
      projections: allProjections,
      log: quietLog,
    });
    return projector;
  };
  return {
    db,
    store,
    directory,
    context,
    startProjector,
    async sync(syncOptions = {}) {
      if (!projector) await startProjector();
      const result = await captureOnce(context, source, syncOptions);
      const head = await store.head();
      for (const projection of allProjections) {
        await waitForProjection(db.pool, projection.name, head, 10_000);
      }
      return result.recorded;
    },
  };
}
