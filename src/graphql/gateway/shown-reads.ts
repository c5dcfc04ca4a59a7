import {
  shownText,
  type DirectoryClient,
  type DirectoryEntry,
  type DirectorySchema,
  type ReadOptions,
  type SearchOptions,
  type ShownAs,
} from "../../directory/index.ts";

/**
 * The live directory as the gateway reads it, with the values the projections serve as AD's
 * tools show them (a SID `S-1-5-21-…`, objectGUID as GUID text) shown alike: such attributes
 * are asked for as bytes (as text they would come decoded as UTF-8, destroyed) and given as
 * that text, unless the field asked for the bytes (`@ldapField(binary: true)`). A schema with
 * no such attribute (any server but AD) leaves the client as it is.
 *
 * @example
 * const live = shownValuesDirectory(directory, schema);
 */
export function shownValuesDirectory(
  directory: DirectoryClient,
  schema: DirectorySchema,
): DirectoryClient {
  const shown = new Map<string, ShownAs>();
  for (const type of schema.attributeTypes) {
    if (type.shown !== undefined)
      for (const name of type.names) shown.set(name.toLowerCase(), type.shown);
  }
  if (shown.size === 0) return directory;
  const names = [...shown.keys()];
  const widened = <T extends ReadOptions>(options: T): T => ({
    ...options,
    binaryAttributes: [...(options.binaryAttributes ?? []), ...names],
  });
  const asShown = (entry: DirectoryEntry, options: ReadOptions): DirectoryEntry => {
    const asked = new Set((options.binaryAttributes ?? []).map((name) => baseName(name)));
    let attributes: DirectoryEntry["attributes"] | undefined;
    for (const [name, values] of Object.entries(entry.attributes)) {
      const key = baseName(name);
      const form = shown.get(key);
      if (form === undefined || asked.has(key)) continue;
      attributes ??= { ...entry.attributes };
      attributes[name] = values.map((value) =>
        shownText(form, Buffer.isBuffer(value) ? value.toString("base64") : value),
      );
    }
    return attributes === undefined ? entry : { ...entry, attributes };
  };
  return new Proxy(directory, {
    get(target, property, receiver) {
      if (property === "search") {
        return async function* (dn: string, options: SearchOptions = {}) {
          for await (const page of target.search(dn, widened(options))) {
            yield page.map((entry) => asShown(entry, options));
          }
        };
      }
      if (property === "get") {
        return async (dn: string, options: ReadOptions = {}) => {
          const entry = await target.get(dn, widened(options));
          return entry === undefined ? undefined : asShown(entry, options);
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function" ? (value as Function).bind(target) : value; // eslint-disable-line @typescript-eslint/no-unsafe-function-type
    },
  });
}

const baseName = (name: string): string => (name.split(";")[0] ?? name).toLowerCase();
