import { z } from "zod";
import { configPath, type SectionContext, text } from "../fields.ts";

const LANGUAGE = /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/;

/** `[i18n]`: languages of the GraphQL gateway's localized values and fieldset labels. */
export function i18nSection(ctx: SectionContext) {
  return z
    .strictObject(
      {
        /**
         * The language used when neither a `locale` argument nor `Accept-Language` names one
         * that is there; always tried last. Default `"en"`.
         */
        fallbackLanguage: text()
          .regex(LANGUAGE, 'expected a language tag such as "en" or "de-CH"')
          .default("en"),
        /**
         * Directory of translation files `<language>/<namespace>.json` (namespaces `fieldset`
         * and `common`), keys nested or dotted. Relative to the working directory. Default none.
         */
        translations: configPath(ctx).optional(),
      },
      { error: "expected a table: [i18n]" },
    )
    .prefault({});
}

/** The resolved `[i18n]` section. */
export type I18nConfig = z.output<ReturnType<typeof i18nSection>>;
