import { h } from "./dom.ts";
import { languagesOf, pickLanguage } from "./languages.ts";

const NAMES = new Intl.DisplayNames(undefined, { type: "language" });

/** A value as the viewer reads it: a multi-language one in their language, the rest folded. */
export function localizedView(value: string): HTMLElement | string {
  const parts = languagesOf(value);
  if (!parts) return value;
  const chosen = pickLanguage(parts, navigator.languages);
  const others = parts.filter((part) => part !== chosen);
  return h(
    "span",
    { class: "localized", lang: chosen.language },
    chosen.text,
    others.length > 0
      ? h(
          "details",
          { class: "languages" },
          h(
            "summary",
            null,
            `${others.length} other ${others.length === 1 ? "language" : "languages"}`,
          ),
          h(
            "dl",
            null,
            ...others.flatMap((part) => [
              h("dt", null, NAMES.of(part.language) ?? part.language),
              h("dd", { lang: part.language }, part.text),
            ]),
          ),
        )
      : null,
  );
}
