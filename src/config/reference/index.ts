/**
 * The configuration reference, `docs/configuration.md`, generated from the schemas in
 * `../sections/`: each option's `.meta({ description, example })`, its type, its default and
 * whether it is required are read from the schema that validates it, so the reference cannot
 * say what the code does not do. `npm run docs` writes it; `npm run check` fails when
 * the file in the repository is not what it would write.
 */
import { z } from "zod";
import { ENV_OVERRIDES } from "../overrides.ts";
import { configSchema } from "../schema.ts";
import { SECRET_KEYS } from "../secrets.ts";
import { intro } from "./intro.ts";
import { renderContents, renderTables, slug } from "./markdown.ts";
import { describeTables, type KeyReference, type TableReference } from "./options.ts";
import { unwrap } from "./unwrap.ts";

export { describeTables, type KeyReference, type TableReference } from "./options.ts";
export { renderTables } from "./markdown.ts";
export { tomlValue } from "./toml.ts";

/** Where the reference lives, relative to the repository's root. */
export const REFERENCE_FILE = "docs/configuration.md";

/** The command that writes it, named at its top and in the hint when it is stale. */
export const REFERENCE_COMMAND = "npm run docs";

/** Every table of annal's configuration, as the reference describes them. */
export function configTables(): TableReference[] {
  // Paths in the schema resolve against these; the reference shows values as written.
  return describeTables(configSchema({ cwd: "/", configDir: "/" }));
}

/** The whole of `docs/configuration.md`. */
export function configReference(tables: readonly TableReference[] = configTables()): string {
  const document = [
    "# Configuration reference: `annal.toml`",
    `_This file is generated from the schemas in \`src/config/sections/\` by \`${REFERENCE_COMMAND}\`; do not edit it. \`npm run check\` fails when it is not current._`,
    intro(),
    "## Tables",
    renderContents(tables),
    renderTables(tables, { notes: keyNotes }),
  ].join("\n\n");
  assertUniqueAnchors(document);
  return `${document}\n`;
}

const secretKeys = new Set(SECRET_KEYS.map((key) => key.toLowerCase()));

/** What the rules outside the schema say about a key: secrets, overriding variables. */
function keyNotes(key: KeyReference): string[] {
  const notes: string[] = [];
  if (secretKeys.has(key.key.toLowerCase())) {
    notes.push(
      'Secret: write an environment reference such as `"${LDAP_PASSWORD}"`; a value written into the file is refused',
    );
  }
  for (const { variable, key: path } of ENV_OVERRIDES) {
    if (path.join(".") === key.path)
      notes.push(`Overridden by the environment variable \`${variable}\``);
  }
  const { core } = unwrap(key.schema);
  if (
    core instanceof z.ZodNumber &&
    typeof key.example === "number" &&
    !key.schema.safeParse(String(key.example)).success
  ) {
    notes.push("A TOML number only: a string of digits (from an environment reference) is refused");
  }
  return notes;
}

/** Links in the contents go to the first heading of a slug: two headings must not share one. */
function assertUniqueAnchors(document: string): void {
  const seen = new Set<string>();
  for (const [, heading] of document.matchAll(/^#{1,6} (.+)$/gm)) {
    const anchor = slug(heading!);
    if (seen.has(anchor))
      throw new Error(`two headings of the reference share the anchor #${anchor}`);
    seen.add(anchor);
  }
}
