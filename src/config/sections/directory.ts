import { z } from "zod";
import {
  duration,
  integer,
  localPath,
  parseUrl,
  port,
  type SectionContext,
  text,
  urlWithScheme,
} from "../fields.ts";

/**
 * Attributes whose values never enter the event log (the change is recorded, the value is
 * not). `[directory.capture] redact` adds to this list; it cannot remove from it.
 */
export const BUILT_IN_REDACTED_ATTRIBUTES: readonly string[] = [
  "userPassword",
  "authPassword",
  "pwdHistory",
  "sambaNTPassword",
  "sambaLMPassword",
  "sambaPasswordHistory",
  "krb5Key",
  "krbPrincipalKey",
  "unicodePwd",
  "dBCSPwd",
  "ntPwdHistory",
  "lmPwdHistory",
  "supplementalCredentials",
  "userPKCS12",
  "olcRootPW",
];

const TYPE_NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;
// An attribute description: a name with options (`userCertificate;binary`) or an OID.
const ATTRIBUTE = /^(?:[A-Za-z][A-Za-z0-9-]*(?:;[A-Za-z0-9-]+)*|\d+(?:\.\d+)+)$/;
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** One `[[directory.types]]` entry. */
function entryType() {
  return z.strictObject(
    {
      /** The type's name in the API (`user`, `group`): a letter, then letters, digits, `_`, `-`. */
      name: text().regex(TYPE_NAME, "expected a letter, then letters, digits, _ or -"),
      /** DN under which entries of this type live (the whole subtree). Required. */
      base: text(),
      /** RFC 4515 filter an entry must match as well. Default `"(objectClass=*)"`. */
      filter: text()
        .refine((filter) => filter.startsWith("(") && filter.endsWith(")"), {
          message: "expected an LDAP filter in parentheses, such as (objectClass=inetOrgPerson)",
        })
        .default("(objectClass=*)"),
    },
    { error: "expected a table: [[directory.types]]" },
  );
}

/**
 * `[[directory.types]]`: an entry belongs to the first type, in file order, whose base and
 * filter it matches. Default: none. Names are unique, compared case-insensitively.
 */
function entryTypes() {
  return z
    .array(entryType(), { error: "expected an array of tables: [[directory.types]]" })
    .superRefine((types, ctx) => {
      const seen = new Set<string>();
      types.forEach((type, index) => {
        const name = type.name.toLowerCase();
        if (seen.has(name)) {
          ctx.addIssue({
            code: "custom",
            path: [index, "name"],
            message: `a type named "${type.name}" is already defined (names are compared case-insensitively)`,
          });
        }
        seen.add(name);
      });
    })
    .default([]);
}

/** `[directory.capture]`: how annal learns of changes made in the directory. */
function capture() {
  return z
    .strictObject(
      {
        /**
         * `"accesslog"` (default) reads the slapd accesslog overlay's log, which gives every
         * change with its time and author; `"poll"` compares entries' `modifyTimestamp` for
         * servers without one.
         */
        source: z
          .enum(["accesslog", "poll"], { error: 'expected "accesslog" or "poll"' })
          .default("accesslog"),
        /** How often to look for new changes, in ms. Default `"2s"`. */
        interval: duration().prefault("2s"),
        /**
         * `poll` only: how often to compare every entry, in ms, to catch deletions and changes a
         * poll missed. Default `"10m"`.
         */
        reconcileInterval: duration().prefault("10m"),
        /**
         * How often to record a snapshot event of every entry, in ms, so that history can be read
         * without replaying from the beginning. Default `"1d"`; `"0"` (resolved to 0) disables.
         */
        snapshotInterval: duration({ allowZero: true }).prefault("1d"),
        /**
         * More attributes to redact, added to `BUILT_IN_REDACTED_ATTRIBUTES`. Default `[]`.
         * Resolves to the union of both, compared case-insensitively, built-in spellings first.
         */
        redact: z
          .array(text().regex(ATTRIBUTE, "expected an attribute name such as userPassword"), {
            error: "expected an array of attribute names",
          })
          .transform(withBuiltInRedactions)
          .prefault([]),
      },
      { error: "expected a table: [directory.capture]" },
    )
    .prefault({});
}

function withBuiltInRedactions(configured: readonly string[]): string[] {
  const byLowerCase = new Map<string, string>();
  for (const name of [...BUILT_IN_REDACTED_ATTRIBUTES, ...configured]) {
    if (!byLowerCase.has(name.toLowerCase())) byLowerCase.set(name.toLowerCase(), name);
  }
  return [...byLowerCase.values()];
}

/**
 * `[directory.demo]`: only in the demo configuration. annal starts a private slapd itself,
 * listening on `127.0.0.1:<port>`, which `directory.url` must point to.
 */
function demo(ctx: SectionContext) {
  return z.strictObject(
    {
      /** Port slapd listens on. Default `3890`. */
      port: port().default(3890),
      /** slapd's database and configuration. Default `".annal/slapd"`, against the cwd. */
      dataDir: localPath(ctx).prefault(".annal/slapd"),
    },
    { error: "expected a table: [directory.demo]" },
  );
}

/** `[directory]`: the LDAP directory. Optional: without it annal runs with no directory. */
export function directorySection(ctx: SectionContext) {
  return z
    .strictObject(
      {
        /** `ldap://host:port` or `ldaps://host:port`. Required. */
        url: urlWithScheme(["ldap:", "ldaps:"], "ldap://127.0.0.1:389 or ldaps://ldap.example.org"),
        /** DN annal binds as. Required. */
        bindDN: text(),
        /** Its password: an environment reference such as `"${LDAP_PASSWORD}"`. Required. */
        password: text(),
        /** Base DN of everything annal reads and writes. Required. */
        base: text(),
        /** Most connections to the directory this process opens. Default `4`. */
        poolSize: integer(1, 100).default(4),
        /** Time limit for one LDAP operation, in ms. Default `"10s"`. */
        timeout: duration().prefault("10s"),
        types: entryTypes(),
        capture: capture(),
        demo: demo(ctx).optional(),
      },
      { error: "expected a table: [directory]" },
    )
    .superRefine((directory, ctx) => {
      if (directory.demo === undefined) return;
      const url = parseUrl(directory.url);
      const listensThere =
        url !== undefined &&
        url.protocol === "ldap:" &&
        LOOPBACK_HOSTS.has(url.hostname) &&
        Number(url.port === "" ? 389 : url.port) === directory.demo.port;
      if (!listensThere) {
        ctx.addIssue({
          code: "custom",
          path: ["url"],
          message: `with [directory.demo], expected ldap://127.0.0.1:${directory.demo.port}, where the demo slapd listens`,
        });
      }
    })
    .optional();
}

/** The resolved `[directory]` section. */
export type DirectoryConfig = NonNullable<z.output<ReturnType<typeof directorySection>>>;
