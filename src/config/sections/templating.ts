import { z } from "zod";
import { configPath, type SectionContext } from "../fields.ts";

const NAME = /^[A-Za-z][A-Za-z0-9_.-]*$/;

export function templatingSection(ctx: SectionContext) {
  return z
    .strictObject(
      {
        partials: z
          .record(
            z.string().regex(NAME, "a partial's name is a letter, then letters, digits, _, . or -"),
            configPath(ctx),
            {
              error:
                'expected a table of names and files: [templating.partials] reset = "templates/reset.hbs"',
            },
          )
          .default({})
          .meta({
            description:
              'Named templates (Handlebars files), rendered as `render("@<name>", { data })` and usable inside any template as `{{> name}}`. Each file is read at start-up (and again on each render in development).',
            example: { "password-reset": "templates/password-reset.hbs" },
          }),
      },
      { error: "expected a table: [templating]" },
    )
    .optional()
    .meta({
      description:
        "Templates that custom endpoints render (`c.env.templating.render`), with Handlebars: values are HTML-escaped unless written `{{{triple}}}`. Without this table a render fails with `ANNAL_TEMPLATING_NOT_CONFIGURED`.",
    });
}

/** The resolved `[templating]` section. */
export type TemplatingConfig = NonNullable<z.output<ReturnType<typeof templatingSection>>>;
