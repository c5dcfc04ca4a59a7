import {
  getNamedType,
  isObjectType,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLObjectType,
} from "graphql";
import {
  canonicalIdentity,
  identityAttributes,
  type IdentitySetting,
} from "../../../directory/index.ts";
import { identityOfEntry, isEntry } from "../entry.ts";
import {
  current,
  eachValue,
  fieldArgument,
  needAttribute,
  needEveryAttribute,
  resolveField,
  shapeOf,
  siteError,
  type DirectiveCompiler,
  type DirectiveSite,
  type StepInput,
} from "./site.ts";

/** `@alias(path)`: the value of another field (or property) of the same object, dotted. */
export const alias: DirectiveCompiler = (site) => {
  const path = String(site.args.path ?? "");
  const segments = path.split(".");
  if (path === "" || segments.some((segment) => segment === "")) {
    throw siteError(site, `path "${path}" is not a dotted path such as "main.temp"`);
  }
  if (segments[0] === site.field.name) {
    throw siteError(site, "the path starts at the field itself, which would never end");
  }
  // The path may run through other fields, whose attributes are theirs to name.
  if (site.owner.getFields()[segments[0]!] === undefined) needAttribute(site, segments[0]!);
  else needEveryAttribute(site);
  const list = shapeOf(site.field).list;
  return async (input) => {
    let value: unknown = input.parent;
    let type: GraphQLObjectType | undefined = site.owner;
    for (const [index, segment] of segments.entries()) {
      if (value === null || value === undefined) return null;
      const last = index === segments.length - 1;
      const field: GraphQLField<unknown, unknown> | undefined = type?.getFields()[segment];
      if (
        type !== undefined &&
        field !== undefined &&
        (field.resolve !== undefined || !isEntry(value))
      ) {
        value = await resolveField(type, segment, value, input);
        const named: GraphQLNamedType = getNamedType(field.type);
        type = isObjectType(named) ? named : undefined;
      } else if (isEntry(value)) {
        const values = value.values(segment);
        value = last && list ? [...values] : (values[0] ?? null);
        type = undefined;
      } else if (typeof value === "object") {
        value = (value as Record<string, unknown>)[segment];
        type = undefined;
      } else {
        return null;
      }
    }
    return value ?? null;
  };
};

/** Encodings of `BufferEncoding`, as Node names them. */
const ENCODINGS = new Set([
  "base64",
  "ascii",
  "utf8",
  "utf16le",
  "ucs2",
  "latin1",
  "binary",
  "hex",
]);

function encodingOf(value: unknown, fallback: string): BufferEncoding {
  const name = typeof value === "string" && ENCODINGS.has(value) ? value : fallback;
  return name as BufferEncoding;
}

function bytesOf(value: unknown): Buffer | undefined {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value);
  if (typeof value === "string") return Buffer.from(value, "utf8");
  return undefined;
}

/** `@buffer(format)`: bytes as a string in `format`; a field argument `format` wins. */
export const buffer: DirectiveCompiler = (site) => {
  const fallback = encodingOf(site.args.format, "base64");
  return (input) => {
    const format = encodingOf(fieldArgument(input, "format"), fallback);
    return eachValue(current(site, input), (item) => bytesOf(item)?.toString(format) ?? null);
  };
};

/** `@ensureArray`: always a list. */
export const ensureArray: DirectiveCompiler = (site) => (input) => {
  const value = current(site, input);
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
};

const TRUE_VALUES = new Set<unknown>([true, 1, "true", "TRUE", "1"]);

/** `@ensureBoolean`: `true`, `1`, `'true'`, `'TRUE'` (and LDAP's `"1"`) are true; all else false. */
export const ensureBoolean: DirectiveCompiler = (site) => (input) => {
  const value = current(site, input);
  return TRUE_VALUES.has(Array.isArray(value) ? value[0] : value);
};

/**
 * `@id(type)`: base64 of `<type>:<id>`. The id is the value before; first in the chain, an
 * entry's identity (`[directory] identity` as UUID text: its entryUUID, nsUniqueId or
 * objectGUID, as the log and REST name it) or a plain object's `id`.
 */
export const id: DirectiveCompiler = (site) => {
  const type = typeof site.args.type === "string" ? site.args.type : site.owner.name;
  const { identity } = site.environment;
  return (input: StepInput) => {
    let value = input.value;
    if (value === undefined || typeof value === "symbol") {
      value = isEntry(input.parent)
        ? identityOfEntry(input.parent, identity)
        : (input.parent as Record<string, unknown> | null)?.id;
    }
    if (Array.isArray(value)) value = value[0];
    if (value === undefined || value === null) return null;
    const text = Buffer.isBuffer(value) ? value.toString("hex") : String(value);
    return Buffer.from(`${type}:${text}`, "utf8").toString("base64");
  };
};

/** The type and id inside an internal ID; undefined when it is not one. */
export function decodeId(value: unknown): { type: string; id: string } | undefined {
  if (typeof value !== "string" || value.length > 1_000 || !/^[A-Za-z0-9+/]+={0,2}$/.test(value)) {
    return undefined;
  }
  const text = Buffer.from(value, "base64").toString("utf8");
  const colon = text.indexOf(":");
  if (colon <= 0 || colon === text.length - 1) return undefined;
  return { type: text.slice(0, colon), id: text.slice(colon + 1) };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** 389's nsUniqueId as it writes it: the same 128 bits grouped 8-8-8-8. */
const NS_UNIQUE_ID = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}$/i;

/**
 * An entry's identity as the log and REST write it (UUID text, lower case) from an argument:
 * UUID text, or an nsUniqueId as 389 writes it where `[directory] identity` may be one.
 */
export function identityArgument(setting: IdentitySetting, value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  if (UUID.test(value)) return value.toLowerCase();
  if (NS_UNIQUE_ID.test(value) && identityAttributes(setting).includes("nsUniqueId")) {
    return canonicalIdentity("nsUniqueId", value);
  }
  return undefined;
}

const BASE64_LIKE = new Set<BufferEncoding>(["base64", "hex", "binary", "latin1"]);

/**
 * `@url(contentType, encoding)`: a data URL. Bytes are written base64; a string is taken as
 * already written in `encoding` (base64 from `@buffer`, or text for `utf8`), so that
 * `@ldapField(binary: true) @url` and `@buffer @url` both work.
 */
export const url: DirectiveCompiler = (site: DirectiveSite) => {
  const contentType = String(site.args.contentType ?? "application/octet-stream");
  if (!/^[\w.+-]+\/[\w.+-]+(\s*;\s*[\w.+-]+=[\w.+-]+)*$/.test(contentType)) {
    throw siteError(site, `contentType "${contentType}" is not a media type such as image/jpeg`);
  }
  const encoding = encodingOf(site.args.encoding, "base64");
  return (input) =>
    eachValue(current(site, input), (item) => {
      if (typeof item === "string") {
        if (BASE64_LIKE.has(encoding)) {
          return `data:${contentType};base64,${Buffer.from(item, encoding).toString("base64")}`;
        }
        return `data:${contentType};charset=utf-8,${encodeURIComponent(item)}`;
      }
      const bytes = bytesOf(item);
      if (bytes === undefined) return null;
      if (BASE64_LIKE.has(encoding))
        return `data:${contentType};base64,${bytes.toString("base64")}`;
      return `data:${contentType};charset=utf-8,${encodeURIComponent(bytes.toString(encoding))}`;
    });
};
