import { guidText } from "../../../directory/index.ts";
import { valuesOf } from "../entry.ts";
import { checkedAttribute } from "../where.ts";
import {
  needAttribute,
  NOTHING,
  shaped,
  shapeOf,
  siteError,
  type DirectiveCompiler,
} from "./site.ts";

/**
 * `@ldapField(attribute, fallbackAttributes, binary)`: the attribute's values (`dn` is the
 * entry's DN), or the first fallback that has any. Every attribute the schema names is read
 * with the entry in the one query that fetches it; `binary` ones come as bytes.
 */
export const ldapField: DirectiveCompiler = (site) => {
  const attribute = typeof site.args.attribute === "string" ? site.args.attribute : site.field.name;
  const fallbacks = Array.isArray(site.args.fallbackAttributes)
    ? (site.args.fallbackAttributes as string[])
    : [];
  const binary = site.args.binary === true;
  const names = [attribute, ...fallbacks];
  for (const name of names) {
    try {
      checkedAttribute(name.split(";")[0]!);
    } catch (error) {
      throw siteError(site, (error as Error).message);
    }
    needAttribute(site, name, binary);
  }
  const shape = shapeOf(site.field);
  return ({ parent, value }) => {
    // After another directive, the attribute is read from the entry (or object) it resolved.
    const source = value === NOTHING ? parent : Array.isArray(value) ? value[0] : value;
    if (source === undefined || source === null || typeof source !== "object") {
      return shape.list ? [] : null;
    }
    for (const name of names) {
      const values = valuesOf(source, name);
      if (values.length > 0) return shaped(shape, binary ? values : values.map(asText(name)));
    }
    return shape.list ? [] : null;
  };
};

/**
 * A value as text where the field did not ask for bytes, though the request read them as
 * bytes for another reader (another field's `binary`, the identity's objectGUID): as the
 * directory would have sent it as text, objectGUID as the GUID text Windows shows.
 */
function asText(name: string): (value: unknown) => unknown {
  const guid = name.toLowerCase() === "objectguid";
  return (value) =>
    Buffer.isBuffer(value)
      ? ((guid ? guidText(value) : undefined) ?? value.toString("utf8"))
      : value;
}
