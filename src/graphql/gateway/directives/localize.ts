import { expandLanguages, withFallback } from "../i18n.ts";
import { current, eachValue, fieldArgument, type DirectiveCompiler } from "./site.ts";

/**
 * Picks one language of a `<lang>~<text>|<lang>~<text>` value: the first of `languages` it has
 * (a tag or its primary language), else the first part. A value without `~` is returned as it is.
 */
export function localize(value: string, languages: readonly string[]): string {
  const parts = value.split("|").map((part) => {
    const tilde = part.indexOf("~");
    return tilde <= 0
      ? undefined
      : { language: part.slice(0, tilde).trim().toLowerCase(), text: part.slice(tilde + 1) };
  });
  if (parts.some((part) => part === undefined)) return value;
  const known = parts as { language: string; text: string }[];
  for (const language of expandLanguages(languages)) {
    const match =
      known.find((part) => part.language === language) ??
      known.find((part) => part.language.split("-")[0] === language);
    if (match !== undefined) return match.text;
  }
  return known[0]?.text ?? value;
}

/**
 * `@localizeLdapAttribute(localize, locale)`: the language of a field argument `locale`, else
 * the directive's `locale`, else `Accept-Language`; then `[i18n] fallbackLanguage`.
 */
export const localizeLdapAttribute: DirectiveCompiler = (site) => {
  const enabled = site.args.localize !== false;
  const fixed = typeof site.args.locale === "string" ? site.args.locale : undefined;
  const fallback = site.environment.fallbackLanguage;
  return (input) => {
    const value = current(site, input);
    if (!enabled) return value ?? null;
    const asked = fieldArgument(input, "locale");
    const requested =
      typeof asked === "string"
        ? [asked]
        : Array.isArray(asked)
          ? asked.map(String)
          : fixed !== undefined
            ? [fixed]
            : input.context.languages;
    const languages = withFallback(requested, fallback);
    return eachValue(value, (item) =>
      typeof item === "string" ? localize(item, languages) : item,
    );
  };
};
