import { checkConfiguration, openDatabase } from "../../app/index.ts";
import { accessNotActive, normalizeGrants } from "../../auth/index.ts";
import { loadConfig, type AnnalConfig } from "../../config/index.ts";
import type { HooksRegistry } from "../../hooks/index.ts";
import { checkMigrations } from "../../db/index.ts";
import { checkEndpoints } from "../../endpoints/index.ts";
import { AnnalError } from "../../errors/index.ts";
import { pingDatabase } from "../../http/index.ts";
import { createLogger } from "../../logger.ts";
import { checkPostgresVersion } from "../../operations/index.ts";
import { EventStore } from "../../store/index.ts";
import type { Output } from "../output.ts";
import type { CommandModule } from "../command.ts";
import { VERIFY } from "../registry.ts";
import { parseCommandLine } from "../usage.ts";

export const REQUIRED_NODE_MAJOR = 26;

/** annal runs on a Node.js older than it needs (type stripping and more). */
export class NodeVersionError extends AnnalError {
  constructor(version: string) {
    super(
      "ANNAL_NODE_VERSION_MISMATCH",
      `annal needs Node.js ${REQUIRED_NODE_MAJOR} or newer; this is ${version}`,
      {
        hint: "run annal through npm (npm start, npm run annal) or bin/annal.js, which use the Node.js the project pins",
      },
    );
  }
}

export function checkNodeVersion(version: string): void {
  const major = Number.parseInt(version.replace(/^v/, "").split(".")[0] ?? "", 10);
  if (!(major >= REQUIRED_NODE_MAJOR)) throw new NodeVersionError(version);
}

/**
 * `annal verify`: the checks `annal start` depends on, in order, stopping at the first that
 * fails: the Node.js version, the configuration and the files that go with it (hooks, GraphQL
 * schema, workflow definitions bundled and loaded: the same checks start makes before it
 * serves, `checkConfiguration`), the rules file's factory run as start runs it, the database,
 * the PostgreSQL server's version, its migrations.
 * Pending migrations pass (start applies them); unknown ones fail. One `ok` line per passed
 * check. `cwd` and `env` default to the process's.
 */
export async function runVerify(
  options: { config?: string; cwd?: string; env?: NodeJS.ProcessEnv },
  output: Output,
): Promise<number> {
  checkNodeVersion(process.version);
  output.out(`ok node: ${process.version}`);

  const config = await loadConfig({
    configPath: options.config,
    argv: [],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  output.out(
    `ok config: ${config.source.path}${config.source.demo ? " (the demo configuration)" : ""}`,
  );
  const { hooks, gateway, workflows, rules } = await checkConfiguration(config);
  output.out(`ok entry types: ${config.directory?.types.length ?? 0}`);
  output.out(`ok hooks: ${hooksSummary(hooks, config.hooks?.dir)}`);
  output.out(`ok graphql: ${gateway.files.length} schema file(s)`);
  output.out(`ok workflows: ${workflowsSummary(workflows, config.workflows?.dir)}`);

  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(config, log);
  try {
    if (rules?.module !== undefined) {
      // The factory runs as start runs it (docs/endpoints.md: "verify runs the same load").
      // The store opens only for a message the factory sends: the database is checked below.
      const store = {
        appendToStream: async (...args: Parameters<EventStore["appendToStream"]>) =>
          (await EventStore.open(database.pool)).appendToStream(...args),
      };
      const routes = await checkEndpoints(rules.module, { config, store, log });
      output.out(`ok rules: ${routes.length} route(s) from ${rules.file}`);
    }
    await pingDatabase(database.pool, 5000);
    output.out(`ok database: ${database.description} answers`);
    output.out(`ok postgres: ${await checkPostgresVersion(database.pool)}`);
    const { pending } = await checkMigrations(database.pool);
    output.out(
      pending === 0
        ? "ok migrations: current"
        : `ok migrations: ${pending} pending (ANNAL_MIGRATIONS_PENDING); annal start applies them`,
    );
    for (const line of accessLines(config)) output.out(line);
  } finally {
    await database.close();
  }
  return 0;
}

/**
 * The Access Configuration: which version annal start activates, or that none will be
 * active (not a failure: service accounts keep their tokens' access, but people may do
 * nothing), said with its code and a hint.
 */
function accessLines(config: AnnalConfig): string[] {
  const { activate, grants } = config.authorization;
  if (activate === undefined) {
    const notActive = accessNotActive("configurable access");
    return [
      `warn access: ${notActive.code}: no Access Configuration will be active; all configurable access is denied`,
      `warn access: hint: ${notActive.hint}`,
    ];
  }
  // A principal that is not one fails here, as it would at start.
  const functions = Object.keys(normalizeGrants(grants));
  return [
    `ok access: version ${activate.version} (by ${activate.by}) grants ${functions.length === 0 ? "nothing" : functions.join(", ")}`,
  ];
}

function hooksSummary(hooks: HooksRegistry, dir: string | undefined): string {
  if (dir === undefined) return "none configured";
  const names = hooks.hooks.flatMap((h) => [...h.webhooks.keys()].map((w) => `${h.name}/${w}`));
  return names.length === 0 ? `no webhooks in ${dir}` : `${names.join(", ")} from ${dir}`;
}

/** The definitions start would deploy, bundled and loaded as start does. */
function workflowsSummary(
  workflows: readonly { definition: { name: string; version: number } }[],
  dir: string | undefined,
): string {
  if (dir === undefined) return "none configured";
  const names = workflows.map(({ definition }) => `${definition.name}@${definition.version}`);
  return names.length === 0 ? `no definitions in ${dir}` : `${names.join(", ")} from ${dir}`;
}

export const command: CommandModule = {
  run(args, output) {
    const { values } = parseCommandLine(args, VERIFY);
    return runVerify(values, output);
  },
};
