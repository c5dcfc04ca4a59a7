import { join } from "node:path";

/** Where 389's package keeps `template-dse.ldif` and `template-suffix-db.ldif`. */
export const DIRSRV_DATA_DIR = process.env.DIRSRV_DATA_DIR ?? "/usr/share/dirsrv/data";

/** 389's conventional root DN, outside the suffix (as annal meets it in the field). */
export const DIRSRV_ROOT_DN = "cn=Directory Manager";

/** The one backend of a test instance. */
const BACKEND = "userRoot";

/** The files and directories of one instance, all under the test's own directory. */
export function dirsrvPaths(dir: string): {
  config: string;
  dse: string;
  schema: string;
  db: string;
  log: string;
  errorLog: string;
  run: string;
  pidFile: string;
  passwordFile: string;
  others: string[];
} {
  const config = join(dir, "config");
  return {
    config,
    dse: join(config, "dse.ldif"),
    schema: join(config, "schema"),
    db: join(dir, "db"),
    log: join(dir, "log"),
    errorLog: join(dir, "log", "errors"),
    run: join(dir, "run"),
    pidFile: join(dir, "run", "ns-slapd.pid"),
    passwordFile: join(dir, "root-password"),
    others: ["bak", "ldif", "lock", "tmp"].map((name) => join(dir, name)),
  };
}

export interface DseOptions {
  readonly dir: string;
  readonly port: number;
  readonly suffix: string;
  /** `{SSHA}…` or another scheme 389 reads; never the clear password. */
  readonly rootPasswordHash: string;
  /** The account ns-slapd runs as: the test's own user (it cannot switch to another one). */
  readonly user: string;
  /** The entryUUID plugin and its syntax plugin (Debian's build ships them off). */
  readonly entryUUID: boolean;
  /** The Retro Changelog (`cn=changelog`), logging each entry's identity with each change. */
  readonly changelog: boolean;
}

/**
 * The `dse.ldif` of a new instance, made from the package's own templates as `dscreate` does
 * (its placeholders filled, then its backend template for the suffix), without dscreate's
 * Python, systemd and online configuration: ns-slapd starts on it directly, in about half a
 * second. What differs from dscreate's instance is only what a test wants:
 *
 * - `nsslapd-listenhost: 127.0.0.1`, LDAPI off, no TLS;
 * - small fixed caches: autosizing takes a share of the machine's memory, and BerkeleyDB
 *   writes its cache as region files (100 MB per instance, a second of start);
 * - the entryUUID plugins, which must be in `dse.ldif` at the first start: entries made before
 *   them have no entryUUID until a fixup task runs;
 * - the Retro Changelog enabled, with `nsslapd-attribute` mapping the entry's identity into
 *   each record (`targetUniqueId`, and `targetEntryUUID` with the plugin); 389 reads plugin
 *   switches only at start.
 */
export function dseLdif(templates: { dse: string; suffixDb: string }, options: DseOptions): string {
  const paths = dirsrvPaths(options.dir);
  const values: Record<string, string> = {
    schema_dir: paths.schema,
    lock_dir: join(options.dir, "lock"),
    tmp_dir: join(options.dir, "tmp"),
    cert_dir: paths.config,
    ldif_dir: join(options.dir, "ldif"),
    bak_dir: join(options.dir, "bak"),
    run_dir: paths.run,
    inst_dir: options.dir,
    log_dir: paths.log,
    fqdn: "localhost",
    ds_port: String(options.port),
    ds_user: options.user,
    rootdn: DIRSRV_ROOT_DN,
    ds_passwd: options.rootPasswordHash,
    ldapi_enabled: "off",
    ldapi: join(paths.run, "ldapi"),
    ldapi_autobind: "off",
    ds_suffix: options.suffix,
    config_dir: paths.config,
    db_dir: paths.db,
    db_home_dir: paths.db,
    db_lib: "bdb", // dscreate's default in 2.3 (mdb works too)
    ds_bename: BACKEND,
  };
  const entries = [
    ...blocks(fill(templates.dse, values)),
    ...blocks(fill(templates.suffixDb, values)),
  ];
  const retroAttributes = [
    "nsuniqueid:targetUniqueId",
    ...(options.entryUUID ? ["entryuuid:targetEntryUUID"] : []),
  ];
  const edited = entries.map((entry) => {
    switch (dnOf(entry).toLowerCase()) {
      case "cn=config":
        return withAttributes(entry, { "nsslapd-listenhost": ["127.0.0.1"] });
      case "cn=config,cn=ldbm database,cn=plugins,cn=config":
        return withAttributes(entry, {
          "nsslapd-cache-autosize": ["0"],
          "nsslapd-dbcachesize": [String(8 << 20)],
        });
      case `cn=${BACKEND.toLowerCase()},cn=ldbm database,cn=plugins,cn=config`:
        return withAttributes(entry, {
          "nsslapd-cachememsize": [String(8 << 20)],
          "nsslapd-dncachememsize": [String(4 << 20)],
        });
      case "cn=retro changelog plugin,cn=plugins,cn=config":
        return options.changelog
          ? withAttributes(entry, {
              "nsslapd-pluginenabled": ["on"],
              "nsslapd-attribute": retroAttributes,
            })
          : entry;
      default:
        return entry;
    }
  });
  return `${[...edited, ...(options.entryUUID ? ENTRYUUID_PLUGINS : [])].join("\n\n")}\n`;
}

/** Fills `%name%` placeholders; one the template has and we do not know is an error, not a gap. */
function fill(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/%([a-z_]+)%/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined)
      throw new Error(`389's template has a placeholder annal does not fill: %${name}%`);
    return value;
  });
}

/**
 * The entries of an LDIF file, comments dropped. ns-slapd reads a second blank line in a row as
 * an entry without a DN and refuses the whole file, so entries are rejoined with exactly one.
 */
function blocks(ldif: string): string[] {
  return ldif
    .split("\n")
    .filter((line) => !line.startsWith("#"))
    .join("\n")
    .split(/\n\s*\n/)
    .map((block) => block.trim())
    .filter((block) => block !== "");
}

function dnOf(entry: string): string {
  return (/^dn:\s*(.*)$/m.exec(entry)?.[1] ?? "").replace(/\s*,\s*/g, ",");
}

/** The entry with each named attribute's values (and their continuation lines) replaced. */
function withAttributes(entry: string, set: Readonly<Record<string, readonly string[]>>): string {
  const names = new Set(Object.keys(set).map((name) => name.toLowerCase()));
  const kept: string[] = [];
  let dropping = false;
  for (const line of entry.split("\n")) {
    if (!line.startsWith(" ")) dropping = names.has(line.slice(0, line.indexOf(":")).toLowerCase());
    if (!dropping) kept.push(line);
  }
  const added = Object.entries(set).flatMap(([name, values]) => values.map((v) => `${name}: ${v}`));
  return [...kept, ...added].join("\n");
}

/**
 * The entryUUID plugins as upstream's own `dse.ldif` bootstrap defines them (389-ds-base,
 * `ldap/servers/slapd/fedse.c`, under RUST_ENABLE), which Debian's template lacks.
 */
const ENTRYUUID_PLUGINS = [
  ["entryuuid_syntax", "libentryuuid-syntax-plugin", "entryuuid_syntax_plugin_init", "syntax"],
  ["entryuuid", "libentryuuid-plugin", "entryuuid_plugin_init", "betxnpreoperation"],
].map(([cn, path, init, type]) =>
  [
    `dn: cn=${cn},cn=plugins,cn=config`,
    "objectclass: top",
    "objectclass: nsSlapdPlugin",
    `cn: ${cn}`,
    `nsslapd-pluginpath: ${path}`,
    `nsslapd-plugininitfunc: ${init}`,
    `nsslapd-plugintype: ${type}`,
    "nsslapd-pluginenabled: on",
    `nsslapd-pluginId: ${cn}`,
    "nsslapd-pluginVersion: none",
    "nsslapd-pluginVendor: 389 Project",
    `nsslapd-pluginDescription: ${cn}`,
  ].join("\n"),
);
