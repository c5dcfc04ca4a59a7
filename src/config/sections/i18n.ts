import { z } from "zod";
import { configPath, type SectionContext, text } from "../fields.ts";

const LANGUAGE = /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/;

export function i18nSection(ctx: SectionContext) {
  return z
    .strictObject(
      {
        fallbackLanguage: text()
          .regex(LANGUAGE, 'expected a language tag such as "en" or "de-CH"')
          .default("en")
          .meta({
            description:
              "The language used when neither a `locale` argument nor `Accept-Language` names one that is there; always tried last.",
            typeName: "language tag",
            example: "de-CH",
          }),
        translations: configPath(ctx).optional().meta({
          description:
            "Directory of translation files `<language>/<namespace>.json` (namespaces `fieldset` and `common`), keys nested or dotted.",
          example: "gateway/i18n",
        }),
      },
      { error: "expected a table: [i18n]" },
    )
    .prefault({})
    .meta({
      description: "Languages of the GraphQL gateway's localized values and fieldset labels.",
    });
}

/** The resolved `[i18n]` section. */
export type I18nConfig = z.output<ReturnType<typeof i18nSection>>;
