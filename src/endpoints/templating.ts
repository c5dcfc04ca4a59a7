import { readFileSync } from "node:fs";
import Handlebars from "handlebars";
import type { TemplatingConfig } from "../config/index.ts";
import { AnnalError } from "../errors/index.ts";

/** `c.env.templating`. */
export interface Templating {
  /**
   * Renders `name` with `data`: `@<partial>` is the template `[templating.partials]` names,
   * anything else is an inline Handlebars template. Values are HTML-escaped unless written
   * `{{{triple}}}`; every partial is usable as `{{> name}}`.
   *
   * @example
   * const html = await c.env.templating.render("@password-reset", { data: { name, link } });
   *
   * @throws AnnalError `ANNAL_TEMPLATING_NOT_CONFIGURED` without `[templating]`,
   *   `ANNAL_TEMPLATE_PARTIAL_NOT_FOUND`, `ANNAL_TEMPLATE_INVALID`.
   */
  render(name: string, options?: { readonly data?: unknown }): Promise<string>;
}

/** Inline templates compiled and kept, at most this many (a rule's few, not user input). */
const INLINE_CACHE = 200;

/**
 * Templating over `[templating]`. Partial files are read now (a file that cannot be read
 * stops start-up with `ANNAL_TEMPLATE_INVALID`); in development they are read again on every
 * render, so an edited template shows without a restart.
 */
export function createTemplating(
  config: TemplatingConfig | undefined,
  mode: { readonly development: boolean },
): Templating {
  if (!config) {
    return {
      render: () =>
        Promise.reject(
          new AnnalError(
            "ANNAL_TEMPLATING_NOT_CONFIGURED",
            "an endpoint rendered a template, but annal.toml has no [templating] table",
          ),
        ),
    };
  }
  const load = () => {
    const handlebars = Handlebars.create();
    const partials = new Map<string, HandlebarsTemplateDelegate>();
    for (const [name, file] of Object.entries(config.partials)) {
      let source: string;
      try {
        source = readFileSync(file, "utf8");
      } catch (error) {
        throw new AnnalError(
          "ANNAL_TEMPLATE_INVALID",
          `[templating.partials] ${name}: ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})`,
          { cause: error, details: { partial: name, file } },
        );
      }
      handlebars.registerPartial(name, source);
      partials.set(name, compile(handlebars, source, `@${name}`));
    }
    return { handlebars, partials };
  };
  let loaded = load();
  const inline = new Map<string, HandlebarsTemplateDelegate>();

  return {
    async render(name, options = {}) {
      if (mode.development) {
        loaded = load();
        inline.clear();
      }
      let template: HandlebarsTemplateDelegate | undefined;
      if (name.startsWith("@")) {
        template = loaded.partials.get(name.slice(1));
        if (!template) {
          throw new AnnalError(
            "ANNAL_TEMPLATE_PARTIAL_NOT_FOUND",
            `no partial is named "${name.slice(1)}" in [templating.partials]`,
            {
              hint: `the partials are: ${[...loaded.partials.keys()].join(", ") || "none"}`,
              details: { partial: name.slice(1) },
            },
          );
        }
      } else {
        template = inline.get(name);
        if (!template) {
          template = compile(loaded.handlebars, name, "an inline template");
          if (inline.size >= INLINE_CACHE) inline.clear();
          inline.set(name, template);
        }
      }
      try {
        return template(options.data ?? {});
      } catch (error) {
        throw new AnnalError(
          "ANNAL_TEMPLATE_INVALID",
          `${name.startsWith("@") ? name : "an inline template"} does not render: ${(error as Error).message}`,
          { cause: error },
        );
      }
    },
  };
}

/** Compiles a template, refusing a syntax error now rather than at its first render. */
function compile(
  handlebars: typeof Handlebars,
  source: string,
  what: string,
): HandlebarsTemplateDelegate {
  try {
    handlebars.parse(source);
  } catch (error) {
    throw new AnnalError(
      "ANNAL_TEMPLATE_INVALID",
      `${what} does not compile: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return handlebars.compile(source);
}
