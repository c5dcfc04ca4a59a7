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
import { checkTlsFitsUrl, directoryTls } from "./directory-tls.ts";

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

/**
 * The attributes `[directory] identity` may name, in the order `auto` tries them (what each is
 * and how it becomes UUID text: `src/directory/identity.ts`).
 */
export const IDENTITY_ATTRIBUTES = ["entryUUID", "nsUniqueId", "objectGUID"] as const;

const TYPE_NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;
// An attribute's name, without options: what a sort key names.
const SORT_ATTRIBUTE = /^[A-Za-z][A-Za-z0-9-]*$/;
// An attribute description: a name with options (`userCertificate;binary`) or an OID.
const ATTRIBUTE = /^(?:[A-Za-z][A-Za-z0-9-]*(?:;[A-Za-z0-9-]+)*|\d+(?:\.\d+)+)$/;
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

function entryType() {
  return z.strictObject(
    {
      name: text().regex(TYPE_NAME, "expected a letter, then letters, digits, _ or -").meta({
        description:
          "The type's name in the API: a letter, then letters, digits, `_` or `-`. Names are unique, compared case-insensitively.",
        example: "user",
      }),
      base: text().meta({
        description: "DN under which entries of this type live (the whole subtree).",
        example: "ou=people,dc=example,dc=org",
      }),
      filter: text()
        .refine((filter) => filter.startsWith("(") && filter.endsWith(")"), {
          message: "expected an LDAP filter in parentheses, such as (objectClass=inetOrgPerson)",
        })
        .default("(objectClass=*)")
        .meta({
          description: "RFC 4515 filter an entry must match as well.",
          example: "(objectClass=inetOrgPerson)",
        }),
      sortPairs: z
        .array(
          z
            .array(text().regex(SORT_ATTRIBUTE, "expected an attribute's name, such as sn"), {
              error: 'expected a pair of attribute names, such as ["sn", "cn"]',
            })
            .length(2, 'expected a pair of attribute names, such as ["sn", "cn"]')
            .refine(([first, second]) => first?.toLowerCase() !== second?.toLowerCase(), {
              message: "expected two different attributes",
            }),
          { error: 'expected an array of pairs of attribute names, such as [["sn", "cn"]]' },
        )
        .optional()
        .meta({
          description:
            "Pairs of attributes this type's pages are often sorted by, the first then the second (`sort=sn,cn`). Each pair gets an index of both sort values, so that such a page, also one filtered to one value of the first (`filter=sn eq \"Meyer\"`), is one range of that index, however many entries share the first value. Name each attribute as the directory's schema spells it (`givenName`, not `givenname`): annal refuses to start otherwise (ANNAL_SORT_PAIR_MISNAMED). The index is built in the background when annal starts (`CREATE INDEX CONCURRENTLY`); until then pages are served as without it.",
          example: [["sn", "cn"]],
        }),
    },
    { error: "expected a table: [[directory.types]]" },
  );
}

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
    .default([])
    .meta({
      description:
        "Entry types: an entry belongs to the first type, in file order, whose base and filter it matches. The change history records each entry's type, and the REST channel serves each type under a path of its own (`user` at `/api/entries/users`).",
    });
}

function capture() {
  return z
    .strictObject(
      {
        source: z
          .enum(["accesslog", "changelog", "ad", "poll"], {
            error: 'expected "accesslog", "changelog", "ad" or "poll"',
          })
          .default("accesslog")
          .meta({
            description:
              "`\"accesslog\"` reads the slapd accesslog overlay's log, which gives every change with its time and author; `\"changelog\"` reads 389 Directory Server's Retro Changelog (`cn=changelog`, also in Red Hat Directory Server and FreeIPA) in its change numbers' order, with the time to the second and the author from `modifiersName` (a delete's author is not in it, and is recorded as unknown); `\"ad\"` reads an Active Directory domain controller's objects by `uSNChanged` past the DC's `highestCommittedUSN`, and its deletes from the tombstones under `CN=Deleted Objects` (Show Deleted), with no author (AD records none; annal's own writes keep their cause), each write an object's replication metadata tells apart a change of its own; `\"poll\"` compares entries' `modifyTimestamp`, for servers without either.",
            example: "poll",
          }),
        interval: duration().prefault("250ms").meta({
          description:
            "How often to look for new changes: a change made in the directory is recorded at most this long (plus the pass itself) after it was made. An idle pass is one indexed search (of the accesslog's `reqEnd`, or of `modifyTimestamp` for `poll`). With `accesslog`, a directory that can keep a search of the accesslog open (OpenLDAP: the `syncprov` overlay on the accesslog database) tells annal of each write as it logs it, and the change is recorded at once; while it does, the passes only make sure, every 30 seconds (or this interval, if longer).",
          example: "1s",
        }),
        reconcileInterval: duration().prefault("10m").meta({
          description:
            "`poll` and `ad`: how often to compare every entry, to catch deletions and changes the passes cannot see (a poll sees no delete; on Active Directory an object moved out of the base leaves no tombstone in it, and a tombstone older than `tombstoneLifetime` is gone). It runs beside the passes, which go on recording changes while it reads the directory.",
          example: "1h",
        }),
        snapshotInterval: duration({ allowZero: true }).prefault("1d").meta({
          description:
            "How often to record a snapshot event of every entry, so that history can be read without replaying from the beginning. It runs beside capture's passes, which go on recording changes while it reads the directory, and keeps pace with the projections (it waits before each page until they have applied its page before last, at most 5 s), so a change captured meanwhile does not wait behind a backlog of snapshots.",
          example: "12h",
        }),
        valuesPerWrite: integer(1, 100_000_000).default(50_000).meta({
          description:
            "How many attribute values (over all its entries) one write of an import or periodic snapshot holds at most: a page of the directory is cut into writes of at most this many, and an entry that alone holds more (a group of many members) is written alone. What the import holds in memory at once grows with this, not with the directory.",
          example: 10_000,
        }),
        redact: z
          .array(text().regex(ATTRIBUTE, "expected an attribute name such as userPassword"), {
            error: "expected an array of attribute names",
          })
          // Resolves to the built-in list and these, each name once (compared
          // case-insensitively), built-in spellings first.
          .transform(withBuiltInRedactions)
          .prefault([])
          .meta({
            description: `More attributes whose values never enter the event log (the change is recorded, the value is not), added to the built-in list, which cannot be shortened: ${BUILT_IN_REDACTED_ATTRIBUTES.map((name) => `\`${name}\``).join(", ")}. Names are compared case-insensitively.`,
            example: ["employeeNumber", "homePhone"],
          }),
      },
      { error: "expected a table: [directory.capture]" },
    )
    .prefault({})
    .meta({ description: "How annal learns of changes made in the directory." });
}

function withBuiltInRedactions(configured: readonly string[]): string[] {
  const byLowerCase = new Map<string, string>();
  for (const name of [...BUILT_IN_REDACTED_ATTRIBUTES, ...configured]) {
    if (!byLowerCase.has(name.toLowerCase())) byLowerCase.set(name.toLowerCase(), name);
  }
  return [...byLowerCase.values()];
}

function demo(ctx: SectionContext) {
  return z
    .strictObject(
      {
        port: port().default(3890).meta({ description: "Port the demo slapd listens on." }),
        dataDir: localPath(ctx)
          .prefault(".annal/slapd")
          .meta({ description: "The demo slapd's database and configuration." }),
        history: z.boolean({ error: "expected true or false" }).default(true).meta({
          description:
            "Give the demo a past: on the first start, 90 days of hires, title changes, group moves and a leaver are written to the log (marked `demo: true`) before the import, ending in the directory as it is; where the demo's `access-request` workflow is deployed, also nine access requests of the last nine weeks (approved, denied, escalated, one expired), run by the workflow engine on a moved clock in a scratch database, for `annal simulate` to compare with.",
        }),
      },
      { error: "expected a table: [directory.demo]" },
    )
    .optional()
    .meta({
      description:
        "Only in the demo configuration: annal starts a private slapd with the demo organisation itself, listening on `127.0.0.1:<port>`, which `directory.url` must point to.",
    });
}

export function directorySection(ctx: SectionContext) {
  return z
    .strictObject(
      {
        url: urlWithScheme(
          ["ldap:", "ldaps:"],
          "ldap://127.0.0.1:389 or ldaps://ldap.example.org",
        ).meta({
          description:
            "The directory's URL. With `[directory.demo]`, it must be `ldap://127.0.0.1:<port>`, where the demo slapd listens.",
          example: "ldaps://ldap.example.org",
        }),
        bindDN: text().meta({
          description: "DN annal binds as.",
          example: "cn=annal,ou=services,dc=example,dc=org",
        }),
        password: text().meta({
          description: "The password of `bindDN`.",
          example: "${LDAP_PASSWORD}",
        }),
        base: text().meta({
          description: "Base DN of everything annal reads and writes.",
          example: "dc=example,dc=org",
        }),
        identity: z
          .enum(["auto", ...IDENTITY_ATTRIBUTES], {
            error: `expected one of "auto", ${IDENTITY_ATTRIBUTES.map((a) => `"${a}"`).join(", ")}`,
          })
          .default("auto")
          .meta({
            description:
              "The attribute that identifies an entry for good, through renames and moves: the log's streams, the history and the `entryUUID` of the REST channel and GraphQL are keyed by it, as UUID text. `auto` takes the first an entry has of `entryUUID` (OpenLDAP; 389 Directory Server with its entryUUID plugin), `nsUniqueId` (389 Directory Server) and `objectGUID` (Active Directory, shown as Windows shows a GUID). An entry without it cannot be recorded: annal counts and logs such entries (`ANNAL_ENTRY_WITHOUT_IDENTITY`), and an import that finds no entry with it refuses.",
            example: "nsUniqueId",
          }),
        poolSize: integer(1, 100).default(4).meta({
          description: "Most connections to the directory this process opens.",
          example: 8,
        }),
        timeout: duration()
          .prefault("10s")
          .meta({ description: "Time limit for one LDAP operation.", example: "30s" }),
        types: entryTypes(),
        capture: capture(),
        tls: directoryTls(ctx),
        demo: demo(ctx),
      },
      { error: "expected a table: [directory]" },
    )
    .superRefine(checkTlsFitsUrl)
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
    .optional()
    .meta({
      description:
        "The LDAP directory annal reads, captures and writes to. Without this table annal runs with no directory.",
    });
}

/** The resolved `[directory]` section. */
export type DirectoryConfig = NonNullable<z.output<ReturnType<typeof directorySection>>>;
