import {
  getNamedType,
  getNullableType,
  isInputObjectType,
  isListType,
  isObjectType,
  type GraphQLInputObjectType,
} from "graphql";
import {
  formatDN,
  formatRDN,
  parseDN,
  type AttributeValues,
  type Modification,
} from "../../../directory/index.ts";
import { valuesDigest, withdrawnIfRefused } from "../../../capture/index.ts";
import { AnnalError } from "../../../errors/index.ts";
import { pausePoint } from "../../../pause-points.ts";
import type { DirectoryWrite, GatewayContext } from "../../context.ts";
import type { EntryTypes } from "../entry-types.ts";
import { BadUserInputError } from "../../errors.ts";
import { inputAttribute } from "../input-attributes.ts";
import { checkedAttribute } from "../where.ts";
import { decodeId, identityArgument } from "./values.ts";
import {
  directoryOf,
  shapeOf,
  siteError,
  type DirectiveCompiler,
  type DirectiveSite,
  type StepInput,
} from "./site.ts";

/** How an input type's fields map to attributes, read once at build. */
interface InputMapping {
  readonly fields: readonly { readonly name: string; readonly attribute: string }[];
}

function inputMapping(site: DirectiveSite, type: GraphQLInputObjectType): InputMapping {
  const fields = Object.values(type.getFields()).map((field) => {
    if (isInputObjectType(getNamedType(field.type))) {
      throw siteError(site, `${type.name}.${field.name} must be a scalar or a list of scalars`);
    }
    const attribute = inputAttribute(field);
    try {
      checkedAttribute(attribute.split(";")[0]!);
    } catch (error) {
      throw siteError(site, `${type.name}.${field.name}: ${(error as Error).message}`);
    }
    return { name: field.name, attribute };
  });
  return { fields };
}

function argumentType(site: DirectiveSite, name: string) {
  return site.field.args.find((arg) => arg.name === name)?.type;
}

function inputObjectArgument(site: DirectiveSite, name: string): GraphQLInputObjectType {
  const type = argumentType(site, name);
  const named = type === undefined ? undefined : getNamedType(type);
  if (!isInputObjectType(named))
    throw siteError(site, `the field needs an argument ${name} of an input type`);
  return named;
}

/**
 * An input value as the text written to the directory. A string holding an unpaired UTF-16
 * surrogate has no UTF-8 form (it would be written as U+FFFD): BAD_USER_INPUT, as in filters.
 */
function toText(value: unknown, field: string): string {
  const text = typeof value === "string" ? value : String(value);
  if (!text.isWellFormed()) {
    throw new BadUserInputError("Invalid input", {
      argument: "input",
      hint: `the value of ${field} holds an unpaired UTF-16 surrogate; send it as UTF-8 text`,
    });
  }
  return text;
}

/** Attribute values of one input object; null and missing fields are left out. */
function attributesOf(mapping: InputMapping, input: unknown): Map<string, string[]> {
  const values = new Map<string, string[]>();
  if (input === null || typeof input !== "object") return values;
  for (const field of mapping.fields) {
    const value = (input as Record<string, unknown>)[field.name];
    if (value === undefined || value === null) continue;
    const text = (item: unknown) => toText(item, field.name);
    values.set(field.attribute, Array.isArray(value) ? value.map(text) : [text(value)]);
  }
  return values;
}

/** The configured base of the field's (object) return type. */
function typeBase(site: DirectiveSite): string {
  const shape = shapeOf(site.field);
  if (shape.concrete === undefined || shape.list) {
    throw siteError(site, "the field's type must be one object type (the type of the entry)");
  }
  const base = site.environment.entryTypes.base(shape.concrete);
  if (base === undefined) {
    throw siteError(
      site,
      `no base DN is configured for ${shape.concrete}`,
      `set it in annal.toml: [graphql.types.${shape.concrete}] base = "ou=...,dc=example,dc=org"`,
    );
  }
  return base;
}

/** The entry a mutation is about: its `dn` argument, or its `id` (an internal ID). */
function targetOf(site: DirectiveSite): (input: StepInput) => Promise<string> {
  const hasDN = argumentType(site, "dn") !== undefined;
  const hasId = argumentType(site, "id") !== undefined;
  if (!hasDN && !hasId) throw siteError(site, "the field needs an argument dn: DN! (or id: ID!)");
  const base = site.environment.directoryBase;
  return async (input) => {
    if (typeof input.args.dn === "string") return input.args.dn;
    const decoded = decodeId(input.args.id);
    if (decoded === undefined) throw new BadUserInputError("Invalid id", { argument: "id" });
    // The identity `@id` wrote: an entryUUID, nsUniqueId or objectGUID as UUID text.
    const identity = identityArgument(site.environment.identity, decoded.id);
    if (identity === undefined) throw notFound(String(input.args.id));
    const { loaders } = directoryOf(input.context);
    const found =
      base === undefined
        ? []
        : await loaders.byIdentity.load({ base, scope: "sub", filter: undefined, identity });
    if (found.length !== 1) throw notFound(String(input.args.id));
    return found[0]!.dn;
  };
}

/**
 * The GraphQL type of the entries a mutation may touch: the directive's `type`, else the
 * field's own object type, else `<Type>` of a field named `<verb><Type>` (`deletePerson`).
 */
function entryTypeOf(site: DirectiveSite): string {
  const named = (name: string) => isObjectType(site.environment.schema.getType(name));
  if (typeof site.args.type === "string") {
    if (!named(site.args.type))
      throw siteError(site, `type "${site.args.type}" is no object type of the schema`);
    return site.args.type;
  }
  const concrete = shapeOf(site.field).concrete;
  if (concrete !== undefined) return concrete;
  const fromName = /^[a-z]+([A-Z]\w*)$/.exec(site.field.name)?.[1];
  if (fromName !== undefined && named(fromName)) return fromName;
  throw siteError(
    site,
    "cannot tell which type of entries the mutation touches",
    `name the type: @${site.node.name.value}(type: "Person")`,
  );
}

/**
 * The entry at `dn` when it is of `typeName`; NOT_FOUND otherwise, as for no entry at all,
 * so a typed mutation never touches an entry of another type (`deletePerson` on a group).
 */
async function entryOfType(input: StepInput, dn: string, typeName: string, types: EntryTypes) {
  const { loaders } = directoryOf(input.context);
  const entry = await loaders.byDN.load(dn);
  if (entry === null || !types.holds(typeName, entry)) throw notFound(`${dn} of type ${typeName}`);
}

function notFound(what: string): AnnalError {
  return new AnnalError("ANNAL_ENTRY_NOT_FOUND", `there is no entry ${what}`, { status: 404 });
}

/** The DN the caller writes as; a person the directory does not know cannot write. */
function writerDN(context: GatewayContext): string {
  const dn = context.viewer.actorDN;
  if (dn !== null) return dn;
  throw new AnnalError(
    "ANNAL_ACCOUNT_NO_DN",
    `${context.viewer.account.name} has no entry in the directory to write as`,
  );
}

type WriteDescription = Omit<DirectoryWrite, "actor" | "account" | "requestId">;

function describe(context: GatewayContext, write: WriteDescription): DirectoryWrite {
  const { viewer } = context;
  return {
    ...write,
    actor: writerDN(context),
    account: { id: viewer.account.id, name: viewer.account.name },
    requestId: context.requestId,
  };
}

/**
 * Makes a write: tells the app first (to note its cause; a failure stops the write), then
 * `send`s it; a write the directory refuses withdraws its note, which no other change may take.
 */
async function writeThrough(
  context: GatewayContext,
  write: WriteDescription,
  send: () => Promise<unknown>,
): Promise<void> {
  const note = await context.beforeWrite?.(describe(context, write));
  await withdrawnIfRefused(note, send);
  await written(context, write);
}

/** The write is made: the app captures the change before the answer goes out. */
async function written(context: GatewayContext, write: WriteDescription) {
  context.loaders?.forget(write.dn);
  if (write.newDN !== undefined) context.loaders?.forget(write.newDN);
  if (context.afterWrite === undefined) return;
  try {
    await context.afterWrite(describe(context, write));
  } catch (error) {
    // The directory has the change; only its echo on the REST channel may lag.
    context.log.warn(
      { err: error, dn: write.dn },
      "the change was written but capturing it failed",
    );
  }
  // What follows is the answer: where a test checks that afterWrite has ended before it.
  await pausePoint("graphql.mutation.written", write.dn);
}

async function reread(input: StepInput, dn: string, typeName: string | undefined) {
  const { loaders } = directoryOf(input.context);
  const entry = await loaders.byDN.load(dn);
  return entry?.as(typeName) ?? null;
}

/**
 * `@ldapAdd`: creates the entry `rdn` + the configured base of the return type, with the
 * attributes of `input` (mapped by `@ldapInput`), the type's configured object classes unless
 * the input names some, and the RDN's own values.
 */
export const ldapAdd: DirectiveCompiler = (site) => {
  if (argumentType(site, "rdn") === undefined)
    throw siteError(site, "the field needs an argument rdn: DN!");
  const base = typeBase(site);
  const mapping = inputMapping(site, inputObjectArgument(site, "input"));
  const typeName = shapeOf(site.field).concrete!;
  const objectClasses = site.environment.entryTypes.objectClasses(typeName);
  return async (input) => {
    const { directory } = directoryOf(input.context);
    const relative = parseDN(String(input.args.rdn));
    if (relative.length === 0) throw new BadUserInputError("Invalid rdn", { argument: "rdn" });
    const dn = formatDN([...relative, ...parseDN(base)]);
    const attributes = attributesOf(mapping, input.args.input);
    const has = (name: string) =>
      [...attributes.keys()].some((key) => key.toLowerCase() === name.toLowerCase());
    if (!has("objectClass") && objectClasses.length > 0)
      attributes.set("objectClass", [...objectClasses]);
    for (const ava of relative[0] ?? []) {
      const key = [...attributes.keys()].find(
        (name) => name.toLowerCase() === ava.type.toLowerCase(),
      );
      if (key === undefined) attributes.set(ava.type, [ava.value]);
      else if (!attributes.get(key)!.includes(ava.value)) attributes.get(key)!.push(ava.value);
    }
    await writeThrough(input.context, { operation: "add", dn }, () =>
      directory.add(dn, Object.fromEntries(attributes) as Record<string, AttributeValues>, {
        as: writerDN(input.context),
      }),
    );
    return reread(input, dn, typeName);
  };
};

/**
 * `@ldapModify`: `input` is one `{ operation, changes }` or a list of them, all applied in one
 * modify request (all or nothing). A change with no value (`null`) for `replace` or `delete`
 * removes the attribute.
 */
export const ldapModify: DirectiveCompiler = (site) => {
  const target = targetOf(site);
  const item = inputObjectArgument(site, "input");
  const changes = item.getFields().changes;
  const operation = item.getFields().operation;
  const changesType = changes === undefined ? undefined : getNamedType(changes.type);
  if (operation === undefined || !isInputObjectType(changesType)) {
    throw siteError(
      site,
      `${item.name} needs the fields operation: LDAPChangeOperation! and changes (an input type)`,
    );
  }
  const mapping = inputMapping(site, changesType);
  const shape = shapeOf(site.field);
  const listInput = isListType(getNullableType(argumentType(site, "input")!));
  const typeName = entryTypeOf(site);
  const { entryTypes } = site.environment;
  return async (input) => {
    const { directory } = directoryOf(input.context);
    const dn = await target(input);
    await entryOfType(input, dn, typeName, entryTypes);
    const items = (listInput ? input.args.input : [input.args.input]) as {
      operation: Modification["operation"];
      changes: Record<string, unknown>;
    }[];
    const modifications: Modification[] = [];
    for (const { operation: op, changes: values } of items) {
      for (const field of mapping.fields) {
        if (!(field.name in values)) continue;
        const value = values[field.name];
        const list =
          value === null || value === undefined
            ? []
            : Array.isArray(value)
              ? value.map((item) => toText(item, field.name))
              : [toText(value, field.name)];
        if (op === "add" && list.length === 0) continue;
        modifications.push({ operation: op, attribute: field.attribute, values: list });
      }
    }
    if (modifications.length === 0) {
      throw new BadUserInputError("Invalid input", {
        argument: "input",
        hint: "name at least one attribute to change",
      });
    }
    const changes = modifications.map(({ operation, attribute }) => ({ operation, attribute }));
    const digest = valuesDigest(modifications);
    const write = { operation: "modify" as const, dn, changes, valuesDigest: digest };
    await writeThrough(input.context, write, () =>
      directory.modify(dn, modifications, { as: writerDN(input.context) }),
    );
    if (getNamedType(site.field.type).name === "DN") return dn;
    return reread(input, dn, shape.concrete);
  };
};

/** `@ldapModifyDn`: moves the entry to `rdn` + the configured base of the return type. */
export const ldapModifyDn: DirectiveCompiler = (site) => {
  if (argumentType(site, "rdn") === undefined)
    throw siteError(site, "the field needs an argument rdn: DN!");
  const target = targetOf(site);
  const base = typeBase(site);
  const typeName = shapeOf(site.field).concrete!;
  const { entryTypes } = site.environment;
  return async (input) => {
    const { directory } = directoryOf(input.context);
    const dn = await target(input);
    await entryOfType(input, dn, typeName, entryTypes);
    const [rdn, ...rest] = parseDN(String(input.args.rdn));
    if (rdn === undefined) throw new BadUserInputError("Invalid rdn", { argument: "rdn" });
    const newSuperior = formatDN([...rest, ...parseDN(base)]);
    const newDN = formatDN([rdn, ...parseDN(newSuperior)]);
    const write = { operation: "modifyDN", dn, newDN, newRDN: formatRDN(rdn) } as const;
    await writeThrough(input.context, write, () =>
      directory.modifyDN(dn, formatRDN(rdn), { newSuperior, as: writerDN(input.context) }),
    );
    return reread(input, newDN, typeName);
  };
};

/** `@ldapDelete`: deletes the entry; the field is `DN!` and answers the deleted DN. */
export const ldapDelete: DirectiveCompiler = (site) => {
  if (getNamedType(site.field.type).name !== "DN")
    throw siteError(site, "the field's type must be DN!");
  const target = targetOf(site);
  const typeName = entryTypeOf(site);
  const { entryTypes } = site.environment;
  return async (input) => {
    const { directory } = directoryOf(input.context);
    const dn = await target(input);
    await entryOfType(input, dn, typeName, entryTypes);
    await writeThrough(input.context, { operation: "delete", dn }, () =>
      directory.delete(dn, { as: writerDN(input.context) }),
    );
    return dn;
  };
};
