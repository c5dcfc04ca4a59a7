/**
 * Values written in several languages, `en~Sales|de~Vertrieb|fr~Ventes` (a language tag, `~`,
 * the text; `|` between languages): shown in the viewer's language, the others on demand.
 */

const PART = /^([A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*)~([\s\S]*)$/;

/** The languages of a multi-language value, in its order; undefined for any other value. */
export function languagesOf(value: string): { language: string; text: string }[] | undefined {
  if (!value.includes("~")) return undefined;
  const parts: { language: string; text: string }[] = [];
  for (const part of value.split("|")) {
    const match = PART.exec(part);
    if (!match) return undefined;
    parts.push({ language: match[1]!.toLowerCase(), text: match[2]! });
  }
  return parts.length > 0 ? parts : undefined;
}

/**
 * The part for the first of `preferred` the value has (`de-AT` takes `de`), else English,
 * else the first part.
 */
export function pickLanguage<T extends { language: string }>(
  parts: readonly T[],
  preferred: readonly string[],
): T {
  for (const wanted of preferred.map((language) => language.toLowerCase())) {
    const exact = parts.find((part) => part.language === wanted);
    if (exact) return exact;
    const base = wanted.split("-")[0];
    const near = parts.find((part) => part.language.split("-")[0] === base);
    if (near) return near;
  }
  return parts.find((part) => part.language === "en") ?? parts[0]!;
}
