import { z } from "zod";
import { integer, type SectionContext, text } from "../fields.ts";
import { resolve } from "node:path";
import { restBackendsSection } from "./rest-backends.ts";

const TYPE_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;
const OBJECT_CLASS = /^[A-Za-z][A-Za-z0-9-]*$/;

/** `[graphql.limits]`: what one request may ask; each refusal has its own `extensions.code`. */
function limits() {
  return z
    .strictObject(
      {
        /** Most lexical tokens in a document (`GRAPHQL_PARSE_FAILED`). Default `1000`. */
        maxTokens: integer(10, 100_000).default(1_000),
        /** Deepest nesting of fields (`GRAPHQL_DEPTH_LIMIT_EXCEEDED`). Default `20`. */
        maxDepth: integer(1, 1_000).default(20),
        /** Most aliases (`GRAPHQL_ALIAS_LIMIT_EXCEEDED`). Default `15`. */
        maxAliases: integer(0, 1_000).default(15),
        /** Most directives used in a document (`GRAPHQL_DIRECTIVE_LIMIT_EXCEEDED`). Default `50`. */
        maxDirectives: integer(0, 1_000).default(50),
        /**
         * Highest estimated cost of an operation, from the page sizes along each path: each
         * field costs one per time it may resolve (`GRAPHQL_COST_LIMIT_EXCEEDED`, before
         * anything runs). Default `20000`: 100 people with their groups cost about 3,000.
         */
        maxCost: integer(1, 100_000_000).default(20_000),
        /**
         * Most directory entries one request may read (`GRAPHQL_ENTRY_LIMIT_EXCEEDED` on the
         * field that would read more). Default `10000`.
         */
        maxEntries: integer(1, 10_000_000).default(10_000),
      },
      { error: "expected a table: [graphql.limits]" },
    )
    .prefault({});
}

/**
 * `[graphql.types.<Type>]`: what the directory means by a GraphQL type. `@ldapAdd` creates
 * entries of the type under `base` with `objectClass`; `@ldapModifyDn` moves them there; an
 * entry reached through a union or interface is of the first type whose `objectClass` values
 * it all has and whose `filter` it matches.
 */
function entryType() {
  return z.strictObject(
    {
      /** The DN new entries of this type are created under. */
      base: text().optional(),
      /** Object classes a new entry gets, and that an entry must have to be of this type. */
      objectClass: z
        .array(text().regex(OBJECT_CLASS, "expected an object class name such as inetOrgPerson"))
        .default([]),
      /** RFC 4515 filter an entry of this type matches, e.g. `"(objectClass=groupOfNames)"`. */
      filter: text()
        .refine((filter) => filter.startsWith("(") && filter.endsWith(")"), {
          message: "expected an LDAP filter in parentheses, such as (objectClass=inetOrgPerson)",
        })
        .optional(),
    },
    { error: "expected a table: [graphql.types.<Type>]" },
  );
}

/** `[graphql]`: the GraphQL gateway at `POST /graphql`. */
export function graphqlSection(ctx: SectionContext) {
  return z
    .strictObject(
      {
        /** Answer introspection queries. Default `false` (refused with GRAPHQL_VALIDATION_FAILED). */
        introspection: z.boolean({ error: "expected true or false" }).default(false),
        /**
         * The deployment's schema files, as globs (`"gateway/*.graphql"`), written with
         * `extend type Query` and the directives. Relative globs resolve against the
         * configuration file's directory. Resolved to absolute globs. Default none: only
         * `viewer`.
         */
        schema: z
          .array(text(), { error: 'expected an array of globs such as ["gateway/*.graphql"]' })
          .transform((globs) => globs.map((glob) => resolve(ctx.configDir, glob)))
          .default([]),
        /**
         * The DN a mutation writes as (RFC 4370 proxied authorization), so that the directory's
         * log and annal's change history name the account. `{name}` is the service account's
         * name, `{id}` its id, `{base}` the directory's base DN. Default
         * `"cn={name},ou=service-accounts,{base}"`.
         */
        actorDN: text()
          .refine((template) => /\{(name|id)\}/.test(template), {
            message: "expected a DN template naming the account with {name} or {id}",
          })
          .default("cn={name},ou=service-accounts,{base}"),
        limits: limits(),
        /** Entry types by GraphQL type name; see `[graphql.types.<Type>]`. Default none. */
        types: z
          .record(
            z.string().regex(TYPE_NAME, "expected a GraphQL type name such as Person"),
            entryType(),
          )
          .default({}),
        rest: restBackendsSection(),
      },
      { error: "expected a table: [graphql]" },
    )
    .prefault({});
}

/** The resolved `[graphql]` section. */
export type GraphqlConfig = z.output<ReturnType<typeof graphqlSection>>;
