import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { GatewaySchemaError } from "../errors.ts";

/** Namespaces of the translation files, in the order labels are looked up. */
export const NAMESPACES = ["fieldset", "common"] as const;

type Namespace = (typeof NAMESPACES)[number];
type Table = ReadonlyMap<string, string>;

/**
 * Translations read from `<directory>/<language>/<namespace>.json`. Keys may be nested objects
 * or dotted strings: `{"Person": {"contact": {"label": "Contact"}}}` and
 * `{"Person.contact.label": "Contact"}` are the same key.
 */
export class Translations {
  readonly #tables: ReadonlyMap<string, ReadonlyMap<Namespace, Table>>;

  constructor(tables: ReadonlyMap<string, ReadonlyMap<Namespace, Table>> = new Map()) {
    this.#tables = tables;
  }

  static async load(directory: string | undefined): Promise<Translations> {
    if (directory === undefined) return new Translations();
    const tables = new Map<string, Map<Namespace, Table>>();
    let languages: string[];
    try {
      languages = (await readdir(directory, { withFileTypes: true }))
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name);
    } catch (error) {
      throw new GatewaySchemaError(`cannot read the translations directory ${directory}`, {
        hint: "check [i18n] translations: a directory holding <language>/<namespace>.json",
        cause: error,
      });
    }
    for (const language of languages) {
      const byNamespace = new Map<Namespace, Table>();
      for (const namespace of NAMESPACES) {
        const file = join(directory, language, `${namespace}.json`);
        let text: string;
        try {
          text = await readFile(file, "utf8");
        } catch {
          continue; // a language may lack a namespace
        }
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch (error) {
          throw new GatewaySchemaError(`${file} is not valid JSON`, { file, cause: error });
        }
        byNamespace.set(namespace, flatten(json));
      }
      tables.set(language.toLowerCase(), byNamespace);
    }
    return new Translations(tables);
  }

  /**
   * The first of `keys` that has a text, trying each language in order (`de-CH` then `de`),
   * and in each the namespaces `fieldset` then `common`.
   */
  lookup(languages: readonly string[], keys: readonly string[]): string | undefined {
    for (const language of expandLanguages(languages)) {
      const namespaces = this.#tables.get(language);
      if (namespaces === undefined) continue;
      for (const namespace of NAMESPACES) {
        const table = namespaces.get(namespace);
        if (table === undefined) continue;
        for (const key of keys) {
          const text = table.get(key);
          if (text !== undefined) return text;
        }
      }
    }
    return undefined;
  }
}

function flatten(
  json: unknown,
  prefix = "",
  into = new Map<string, string>(),
): Map<string, string> {
  if (typeof json === "string") {
    into.set(prefix, json);
  } else if (json !== null && typeof json === "object" && !Array.isArray(json)) {
    for (const [key, value] of Object.entries(json)) {
      flatten(value, prefix === "" ? key : `${prefix}.${key}`, into);
    }
  }
  return into;
}

/** `["de-CH", "en"]` → `["de-ch", "de", "en"]`: each tag, then its primary language. */
export function expandLanguages(languages: readonly string[]): string[] {
  const out: string[] = [];
  for (const language of languages) {
    const lower = language.toLowerCase();
    const primary = lower.split("-")[0]!;
    for (const tag of [lower, primary]) if (tag !== "" && !out.includes(tag)) out.push(tag);
  }
  return out;
}

/** The languages of an `Accept-Language` header, most wanted first (`*` and q=0 left out). */
export function acceptedLanguages(header: string | undefined): string[] {
  if (header === undefined || header === "") return [];
  return header
    .split(",")
    .slice(0, 20)
    .map((part, index) => {
      const [tag = "", ...params] = part.trim().split(";");
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find(Boolean);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), index };
    })
    .filter(({ tag, q }) => /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/.test(tag) && q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map(({ tag }) => tag);
}

/** The languages to try: the asked-for ones, then the fallback when not among them. */
export function withFallback(languages: readonly string[], fallback: string): string[] {
  const list = [...languages];
  if (!list.some((language) => language.toLowerCase() === fallback.toLowerCase())) {
    list.push(fallback);
  }
  return list;
}
