import { ERROR_CATALOG, type ErrorCodeSpec } from "./codes/index.ts";

/**
 * `docs/errors.md`: every code of the catalog with its HTTP status, its meaning, its hint and
 * where it surfaces, sorted by code. Written by `npm run docs`; `npm run check` fails
 * when the committed file differs.
 */
export function errorReference(): string {
  const rows = Object.entries(ERROR_CATALOG as Readonly<Record<string, ErrorCodeSpec>>)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([code, spec]) => {
      const where = [
        ...(spec.surfaces ?? []),
        ...(spec.graphql ? [`GraphQL \`${spec.graphql}\``] : []),
      ];
      return `| \`${code}\` | ${spec.statusFrom ?? spec.status} | ${cell(spec.meaning)} | ${cell(spec.hint ?? "")} | ${where.join(", ")} |`;
    });
  return [
    "# Error codes",
    "",
    "<!-- Generated from src/errors/codes/ by `npm run docs`; do not edit by hand. -->",
    "",
    "Every error annal answers carries one of these codes: REST as `code` in a problem+json",
    "body (RFC 9457), GraphQL as `extensions.annalCode` beside `extensions.code`, the webhook",
    'in its log lines beside the spec\'s `{ "error": … }` answer, the command line as',
    "`annal: <CODE>: <message>` followed by `annal: hint: <text>`. The status is the HTTP",
    "status it answers with, or whose status it answers when each error sets its own; a hint",
    "given here is the default, an error may give a better one.",
    "",
    "| code | status | meaning | hint | also |",
    "|---|---|---|---|---|",
    ...rows,
    "",
  ].join("\n");
}

function cell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("\n", " ");
}
