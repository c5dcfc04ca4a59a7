import { relative } from "node:path";
import { DEMO_CONFIG_PATH } from "../locate.ts";
import { ENV_OVERRIDES } from "../overrides.ts";
import { SECRET_KEYS } from "../secrets.ts";
import { PACKAGE_ROOT } from "../../package-root.ts";

const ROOT = PACKAGE_ROOT;

/**
 * What the reference says before the tables: which file annal reads, environment references,
 * secrets, the variables that override keys, and how durations, paths and numbers are written.
 * The rules live in `locate.ts`, `env-references.ts`, `secrets.ts` and `overrides.ts`; the
 * lists here are read from them.
 */
export function intro(): string {
  const secrets = SECRET_KEYS.map((key) => `\`${key}\``).join(" or ");
  const overrides = ENV_OVERRIDES.map(
    ({ variable, key }) => `- \`${variable}\` sets \`${key.join(".")}\``,
  ).join("\n");
  return `annal reads its configuration from one [TOML](https://toml.io/en/v1.0.0) file. Unknown keys are refused with their full path (\`ANNAL_CONFIG_UNKNOWN_KEY\`), wrong values with the key and what was expected (\`ANNAL_CONFIG_INVALID\`). \`annal verify --config <file>\` checks a file as \`annal start\` would.

## Which file

The first of these that names a file:

1. \`--config <file>\` (or \`--config=<file>\`) on the command line;
2. the environment variable \`ANNAL_CONFIG\`;
3. \`annal.toml\` in the directory annal starts in;
4. the demo configuration, \`${relative(ROOT, DEMO_CONFIG_PATH)}\`.

A relative path resolves against the directory annal starts in. A file named by \`--config\` or \`ANNAL_CONFIG\` that does not exist is an error (\`ANNAL_CONFIG_NOT_FOUND\`); annal does not fall back to the next.

## Environment references

Any string value, at any depth, may refer to environment variables:

- \`\${NAME}\` is replaced by the variable's value. A variable that is not set is an error (\`ANNAL_CONFIG_ENV_MISSING\`, naming it and the key); one set to the empty string gives the empty string.
- \`\${NAME:-default}\` is replaced by the variable's value, or by \`default\` when the variable is unset or empty. The default is taken literally and cannot contain \`}\`. It is written in the file, so it is for values that are no secret.
- \`$\${\` stands for a literal \`\${\`. Any other \`\${\` is an error (\`ANNAL_CONFIG_INVALID\`), so that a typo never passes as text.

## Secrets

A key named ${secrets}, in any table and at any depth (compared case-insensitively), holds a secret. Its value must be one environment reference, such as \`password = "\${LDAP_PASSWORD}"\`: a secret written into the file is refused (\`ANNAL_CONFIG_SECRET_LITERAL\`), because configuration files get committed, copied and pasted into tickets.

## Environment variables that override keys

These variables, when set and not empty, replace a key of the file, and their values are checked as the key's would be:

${overrides}

## Durations, paths and whole numbers

- A **duration** is a whole number with a unit, \`ms\`, \`s\`, \`m\`, \`h\`, \`d\` or \`w\`, in quotes: \`"500ms"\`, \`"2s"\`, \`"10m"\`, \`"1d"\`, \`"1w"\`. Parts combine, largest unit first: \`"1h30m"\`. ISO 8601 works too: \`"PT5M"\`, \`"P3D"\`, \`"P1W"\`. annal reads it as milliseconds; months and years, no fixed length, are refused. The grammar is every channel's: [time.md](time.md).
- A **path relative to the directory annal starts in** is for state (\`dataDir\`); a **path relative to the configuration file's directory** is for files that go with the configuration (hooks, the GraphQL schema, translations). annal resolves both to absolute paths.
- A **whole number** is written as a TOML integer, \`poolSize = 10\`, or, so that it can come from an environment reference, as a string of digits, \`poolSize = "\${POOL_SIZE}"\`, unless its key says otherwise.`;
}
