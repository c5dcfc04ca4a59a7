import { z } from "zod";
import { duration, integer, type SectionContext, text } from "../fields.ts";
import { resolve } from "node:path";
import { restBackendsSection } from "./rest-backends.ts";

const TYPE_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;
const OBJECT_CLASS = /^[A-Za-z][A-Za-z0-9-]*$/;

function limits() {
  return z
    .strictObject(
      {
        maxTokens: integer(10, 100_000)
          .default(1_000)
          .meta({ description: "Most lexical tokens in a document (`GRAPHQL_PARSE_FAILED`)." }),
        maxDepth: integer(1, 1_000)
          .default(20)
          .meta({ description: "Deepest nesting of fields (`GRAPHQL_DEPTH_LIMIT_EXCEEDED`)." }),
        maxAliases: integer(0, 1_000)
          .default(15)
          .meta({ description: "Most aliases (`GRAPHQL_ALIAS_LIMIT_EXCEEDED`)." }),
        maxDirectives: integer(0, 1_000).default(50).meta({
          description: "Most directives used in a document (`GRAPHQL_DIRECTIVE_LIMIT_EXCEEDED`).",
        }),
        maxCost: integer(1, 100_000_000).default(20_000).meta({
          description:
            "Highest estimated cost of an operation, from the page sizes along each path: each field costs one per time it may resolve (`GRAPHQL_COST_LIMIT_EXCEEDED`, before anything runs). 100 people with their groups cost about 3,000.",
          example: 50_000,
        }),
        maxEntries: integer(1, 10_000_000).default(10_000).meta({
          description:
            "Most directory entries one request may read (`GRAPHQL_ENTRY_LIMIT_EXCEEDED` on the field that would read more).",
        }),
      },
      { error: "expected a table: [graphql.limits]" },
    )
    .prefault({})
    .meta({
      description:
        "What one request may ask; each refusal has its own `extensions.code`, given with each key.",
    });
}

function entryType() {
  return z.strictObject(
    {
      base: text().optional().meta({
        description: "The DN new entries of this type are created under.",
        example: "ou=people,dc=example,dc=org",
      }),
      objectClass: z
        .array(text().regex(OBJECT_CLASS, "expected an object class name such as inetOrgPerson"))
        .default([])
        .meta({
          description:
            "Object classes a new entry gets, and that an entry must have to be of this type.",
          example: ["inetOrgPerson"],
        }),
      filter: text()
        .refine((filter) => filter.startsWith("(") && filter.endsWith(")"), {
          message: "expected an LDAP filter in parentheses, such as (objectClass=inetOrgPerson)",
        })
        .optional()
        .meta({
          description: "RFC 4515 filter an entry of this type matches.",
          example: "(employeeType=staff)",
        }),
    },
    { error: "expected a table: [graphql.types.<Type>]" },
  );
}

export function graphqlSection(ctx: SectionContext) {
  return z
    .strictObject(
      {
        introspection: z.boolean({ error: "expected true or false" }).default(false).meta({
          description:
            "Answer introspection queries; when off they are refused with `GRAPHQL_VALIDATION_FAILED`.",
          example: true,
        }),
        schema: z
          .array(text(), { error: 'expected an array of globs such as ["gateway/*.graphql"]' })
          .transform((globs) => globs.map((glob) => resolve(ctx.configDir, glob)))
          .default([])
          .meta({
            description:
              "The deployment's schema files, written with `extend type Query` and the directives. Without any, the schema has only `viewer`.",
            typeName: "list of globs, relative to the configuration file's directory",
            example: ["gateway/*.graphql"],
          }),
        actorDN: text()
          .refine((template) => /\{(name|id)\}/.test(template), {
            message: "expected a DN template naming the account with {name} or {id}",
          })
          .default("cn={name},ou=service-accounts,{base}")
          .meta({
            description:
              "The DN a mutation writes as (RFC 4370 proxied authorization), so that the directory's log and annal's change history name the account: `{name}` is the service account's name, `{id}` its id, `{base}` the directory's base DN. It must contain `{name}` or `{id}`.",
            example: "uid={name},ou=robots,{base}",
          }),
        reads: z
          .enum(["projection", "directory"], {
            error: 'expected "projection" or "directory"',
          })
          .default("projection")
          .meta({
            description:
              'Where the `@ldap*` read directives read entries: `"projection"`, the `entries` projection of the event log whenever the read lies inside what capture records (below `[directory] base`, no redacted attribute, a filter the projection compares as the directory does), else the directory; `"directory"`, always the directory. A field overrides it with its directive\'s `reads: DIRECTORY` or `reads: PROJECTION`. Without capture (`[directory.capture]`), always the directory.',
            example: "directory",
          }),
        compile: z.boolean({ error: "expected true or false" }).default(false).meta({
          description:
            'Answer a query that reads the `entries` projection (`reads = "projection"`) with one SQL statement that builds its JSON, when the compiler knows its shape (a connection of `@ldapSearch`, its nodes\' `@ldapField` values and `@ldapFindByAttribute` lists, `first`/`after`, `where`, `by`, `q`, `totalCount`, `pageInfo`); anything else runs through the resolvers, with the same answer. Off by default: at 100,000 people its statement is far slower than the resolvers (bench/RESULTS.md, issue 54).',
          example: true,
        }),
        readYourWritesTimeout: duration().prefault("5s").meta({
          description:
            "How long a mutation waits, at most, until capture has recorded its change and the projections show it. Past it, the mutation's answer and the rest of its request read the directory; `extensions.logPosition` of each response says which log position its projection reads reflect.",
          example: "2s",
        }),
        limits: limits(),
        types: z
          .record(
            z
              .string()
              .regex(TYPE_NAME, "expected a GraphQL type name such as Person")
              .meta({ title: "Type", example: "Person" }),
            entryType(),
          )
          .default({})
          .meta({
            description:
              "What the directory means by a GraphQL type, one table per type name. `@ldapAdd` creates entries of the type under `base` with `objectClass`; `@ldapModifyDn` moves them there; an entry reached through a union or interface is of the first type whose `objectClass` values it all has and whose `filter` it matches.",
          }),
        rest: restBackendsSection(),
      },
      { error: "expected a table: [graphql]" },
    )
    .prefault({})
    .meta({ description: "The GraphQL gateway at `POST /graphql`." });
}

/** The resolved `[graphql]` section. */
export type GraphqlConfig = z.output<ReturnType<typeof graphqlSection>>;
