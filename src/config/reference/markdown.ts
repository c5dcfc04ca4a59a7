import type { KeyReference, TableReference } from "./options.ts";
import { tomlKey, tomlValue } from "./toml.ts";
import type { Presence } from "./unwrap.ts";

export interface RenderOptions {
  /** More lines for a key's list (`Overridden by ...`), each a sentence of Markdown. */
  readonly notes?: (key: KeyReference) => readonly string[];
}

/**
 * The tables as Markdown: a `##` section per table, a `###` per key with its meaning, type,
 * default and an example. The output is already as prettier formats Markdown, so that
 * `prettier --check` and the check that the file is current agree.
 */
export function renderTables(
  tables: readonly TableReference[],
  options: RenderOptions = {},
): string {
  return tables.map((table) => renderTable(table, options)).join("\n\n");
}

/** The list of tables with links to their sections. */
export function renderContents(tables: readonly TableReference[]): string {
  return tables
    .map((table) => `- [${code(tableTitle(table))}](#${slug(code(tableTitle(table)))})`)
    .join("\n");
}

/**
 * The anchor GitHub gives a heading: lower case, punctuation removed, spaces as hyphens.
 *
 * @example
 * slug("`[directory.capture]`"); // "directorycapture"
 */
export function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function renderTable(table: TableReference, options: RenderOptions): string {
  const blocks = [`## ${code(tableTitle(table))}`];
  if (table.description !== undefined) blocks.push(table.description);
  blocks.push(tablePresence(table));
  if (table.open) {
    blocks.push("Keys other than the ones below are allowed and kept, not refused.");
  }
  if (table.tables.length > 0) {
    const links = table.tables.map((header) => `[${code(header)}](#${slug(code(header))})`);
    blocks.push(`Tables in it: ${links.join(", ")}.`);
  }
  for (const key of table.keys) blocks.push(renderKey(table, key, options));
  return blocks.join("\n\n");
}

function renderKey(table: TableReference, key: KeyReference, options: RenderOptions): string {
  const blocks = [`### ${code(key.path)}`];
  if (key.description !== undefined) blocks.push(key.description);
  const facts = [`- Type: ${key.type}`, `- ${keyPresence(key.presence)}`];
  for (const note of options.notes?.(key) ?? []) facts.push(`- ${note}`);
  blocks.push(facts.join("\n"));
  if (key.example !== undefined) {
    const lines = table.exampleHeader === "" ? [] : [table.exampleHeader];
    lines.push(`${tomlKey(key.key)} = ${tomlValue(key.example)}`);
    blocks.push(["```toml", ...lines, "```"].join("\n"));
  }
  return blocks.join("\n\n");
}

function tableTitle(table: TableReference): string {
  return table.header === "" ? "(top level)" : table.header;
}

function tablePresence(table: TableReference): string {
  const none = table.presence.kind === "default" || table.presence.kind === "optional";
  switch (table.kind) {
    case "array":
      return `Any number of ${code(table.header)} tables, in file order${none ? "; none by default" : ""}.`;
    case "record":
      return `Any number of these tables, one per name, such as ${code(table.exampleHeader)}${none ? "; none by default" : ""}.`;
    case "table":
      if (table.presence.kind === "required") return "Required.";
      if (table.presence.kind === "optional") return "Optional.";
      return "Optional: without it, every key takes its default.";
  }
}

function keyPresence(presence: Presence): string {
  if (presence.kind === "required") return "Required";
  if (presence.kind === "optional") return "Default: none";
  return `Default: ${code(tomlValue(presence.value))}`;
}

/** Inline code, with a fence long enough for the backticks inside. */
function code(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((run) => run[0].length));
  const fence = "`".repeat(longest + 1);
  return text.startsWith("`") || text.endsWith("`")
    ? `${fence} ${text} ${fence}`
    : `${fence}${text}${fence}`;
}
