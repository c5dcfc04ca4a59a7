import { glob, readFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import {
  buildASTSchema,
  concatAST,
  getLocation,
  GraphQLError,
  GraphQLScalarType,
  Kind,
  parse,
  Source,
  validateSchema,
  visit,
  type DocumentNode,
  type GraphQLSchema,
} from "graphql";
import { validateSDL } from "graphql/validation/validate.js";
import type { AnnalConfig } from "../../config/index.ts";
import { identityAttributes } from "../../directory/index.ts";
import type { DirectiveEnvironment } from "../context.ts";
import { EntryReads } from "./entry-reads.ts";
import { EntryTypes } from "./entry-types.ts";
import { GatewaySchemaError } from "../errors.ts";
import { Translations } from "./i18n.ts";
import { attachResolvers } from "./resolvers.ts";
import { SCALARS } from "./scalars.ts";
import { PACKAGE_ROOT } from "../../package-root.ts";

/** Where annal's own SDL lives: scalars, directives, helper types, `Query.viewer`. */
export const BUILT_IN_SCHEMA_DIR = resolve(PACKAGE_ROOT, "schema");

/** The gateway's schema and what its resolvers need besides a request. */
export interface Gateway {
  readonly schema: GraphQLSchema;
  readonly config: AnnalConfig;
  readonly entryTypes: EntryTypes;
  readonly translations: Translations;
  /** The attributes every entry is read with: all the schema refers to. */
  readonly attributes: readonly string[];
  readonly binaryAttributes: readonly string[];
  /** The attributes a request reads entries with: those its query's fields need. */
  readonly reads: EntryReads;
  /** The deployment's schema files, as read. */
  readonly files: readonly string[];
}

/**
 * Builds the gateway's schema from annal's SDL in `schema/` and the deployment's files
 * (`[graphql] schema` globs), checks every directive, and attaches the resolvers.
 *
 * @example
 * const gateway = await buildGateway(config);
 * printSchema(gateway.schema);
 *
 * @throws GatewaySchemaError `ANNAL_GRAPHQL_SCHEMA_INVALID` naming the file, line and
 *   directive (or GraphQL rule) at fault; start-up stops with it.
 */
export async function buildGateway(config: AnnalConfig): Promise<Gateway> {
  const builtIn = await schemaFiles([join(BUILT_IN_SCHEMA_DIR, "*.graphql")], false);
  const own = await schemaFiles(config.graphql.schema, true);
  const documents = await Promise.all([...builtIn, ...own].map(parseFile));
  documents.push(...impliedDefinitions(documents));
  const schema = buildSchema(concatAST(documents));
  for (const scalar of SCALARS) {
    const type = schema.getType(scalar.name);
    if (type instanceof GraphQLScalarType) {
      Object.assign(type, {
        serialize: scalar.serialize,
        parseValue: scalar.parseValue,
        parseLiteral: scalar.parseLiteral,
      });
    }
  }
  const entryTypes = new EntryTypes(config.graphql.types);
  const translations = await Translations.load(config.i18n.translations);
  const environment: DirectiveEnvironment = {
    schema,
    entryTypes,
    translations,
    fallbackLanguage: config.i18n.fallbackLanguage,
    directoryBase: config.directory?.base,
    identity: config.directory?.identity ?? "auto",
    restBackends: config.graphql.rest,
    configValues: config,
    attributes: new Map(),
    binaryAttributes: new Map(),
    fieldReads: new Map(),
  };
  // Read with every entry: what tells an entry's type behind a union or interface, and its
  // identity (`@id`, lookups by entryUUID or id): objectGUID as the bytes it is.
  const always = new Map<string, string>();
  const alwaysBinary = new Map<string, string>();
  const identities = identityAttributes(environment.identity);
  for (const name of ["objectClass", ...identities, ...entryTypes.attributes()]) {
    always.set(name.toLowerCase(), name);
    environment.attributes.set(name.toLowerCase(), name);
  }
  if (identities.includes("objectGUID")) {
    alwaysBinary.set("objectguid", "objectGUID");
    environment.binaryAttributes.set("objectguid", "objectGUID");
  }
  attachResolvers(environment);
  const reads = new EntryReads({
    schema,
    always,
    alwaysBinary,
    fields: environment.fieldReads,
    attributes: environment.attributes,
    binaryAttributes: environment.binaryAttributes,
  });
  return {
    schema,
    config,
    entryTypes,
    translations,
    attributes: reads.everything.attributes,
    binaryAttributes: reads.everything.binaryAttributes,
    reads,
    files: own,
  };
}

async function schemaFiles(globs: readonly string[], mustMatch: boolean): Promise<string[]> {
  const files: string[] = [];
  for (const pattern of globs) {
    const matched: string[] = [];
    for await (const file of glob(pattern)) matched.push(resolve(file));
    if (matched.length === 0 && mustMatch) {
      throw new GatewaySchemaError(`no schema file matches ${pattern}`, {
        hint: "check [graphql] schema in annal.toml; globs are relative to the directory of the configuration file",
      });
    }
    files.push(...matched.sort());
  }
  return [...new Set(files)];
}

function displayName(file: string): string {
  const path = relative(process.cwd(), file);
  return path.startsWith("..") ? file : path;
}

async function parseFile(file: string): Promise<DocumentNode> {
  let body: string;
  try {
    body = await readFile(file, "utf8");
  } catch (error) {
    throw new GatewaySchemaError(`cannot read the schema file ${file}`, { file, cause: error });
  }
  const source = new Source(body, displayName(file));
  try {
    return parse(source);
  } catch (error) {
    throw schemaError(error, "hint: GraphQL SDL, with extend type Query { ... } for your fields");
  }
}

function schemaError(error: unknown, hint?: string): GatewaySchemaError {
  if (error instanceof GraphQLError) {
    const location =
      error.source && error.positions?.[0] !== undefined
        ? { file: error.source.name, ...getLocation(error.source, error.positions[0]) }
        : firstNodeLocation(error);
    return new GatewaySchemaError(error.message, { ...location, hint, cause: error });
  }
  return new GatewaySchemaError(String((error as Error)?.message ?? error), { cause: error });
}

function firstNodeLocation(error: GraphQLError) {
  const node = error.nodes?.find((candidate) => candidate.loc !== undefined);
  if (node?.loc === undefined) return {};
  return { file: node.loc.source.name, ...getLocation(node.loc.source, node.loc.start) };
}

function buildSchema(document: DocumentNode): GraphQLSchema {
  // graphql-js's own SDL check throws one plain Error; run it here to keep each error's place.
  const sdlErrors = validateSDL(document);
  if (sdlErrors.length > 0) throw schemaError(sdlErrors[0]);
  let schema: GraphQLSchema;
  try {
    schema = buildASTSchema(document, { assumeValidSDL: true });
  } catch (error) {
    throw schemaError(error);
  }
  const errors = validateSchema(schema);
  if (errors.length > 0) throw schemaError(errors[0]);
  return schema;
}

/**
 * Definitions a deployment may leave out: `type Mutation` when it only extends it, and
 * `<X>Connection` (nodes, pageInfo, totalCount) for every X it refers to that way.
 */
function impliedDefinitions(documents: readonly DocumentNode[]): DocumentNode[] {
  const defined = new Set<string>();
  const extended = new Set<string>();
  const referenced = new Set<string>();
  for (const document of documents) {
    for (const definition of document.definitions) {
      if ("name" in definition && definition.name !== undefined) {
        if (definition.kind === Kind.OBJECT_TYPE_EXTENSION) extended.add(definition.name.value);
        else if (definition.kind.endsWith("Definition")) defined.add(definition.name.value);
      }
    }
    visit(document, {
      NamedType(node) {
        referenced.add(node.name.value);
      },
    });
  }
  const sdl: string[] = [];
  if (extended.has("Mutation") && !defined.has("Mutation")) sdl.push("type Mutation");
  for (const name of referenced) {
    const nodeType = name.replace(/Connection$/, "");
    if (!name.endsWith("Connection") || defined.has(name) || !defined.has(nodeType)) continue;
    sdl.push(
      `"A page of ${nodeType} entries."\ntype ${name} {\n  nodes: [${nodeType}!]!\n  pageInfo: PageInfo!\n  "All matching entries; counted only when asked for."\n  totalCount: Int!\n}`,
    );
  }
  return sdl.length === 0
    ? []
    : [parse(new Source(sdl.join("\n\n"), "annal (implied definitions)"))];
}
