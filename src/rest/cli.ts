import { openDatabase, prepareEventStore } from "../app/index.ts";
import { createToken, listAccounts, parseAccess, revokeAccount } from "../auth/index.ts";
import type { Output } from "../cli/output.ts";
import { parseCommandLine, UsageError } from "../cli/usage.ts";
import { loadConfig } from "../config/index.ts";
import type { Pool } from "../db/index.ts";
import { createLogger } from "../logger.ts";
import type { EventStore } from "../store/index.ts";

/** What the token commands work on. */
export interface TokenDeps {
  readonly pool: Pool;
  readonly store: EventStore;
}

export const TOKEN_USAGE = `  token create --name <name> --access <read,export,...> [--config <file>]
      create a service account (or add a token to it) and print its bearer token, once
  token list [--json] [--config <file>]
      list the service accounts, their access and their tokens (by their first characters)
  token revoke <name> [--config <file>]
      revoke a service account and every token it has`;

/**
 * `annal token create`: prints the token alone on standard output (so `$(annal token create
 * ...)` captures it) and a note on standard error. Only its digest is stored: it is never
 * shown again.
 */
export async function tokenCreate(
  deps: TokenDeps,
  options: { name: string; access: string },
  output: Output,
): Promise<number> {
  const { account, token } = await createToken(deps.pool, deps.store, {
    name: options.name,
    access: parseAccess(options.access),
  });
  output.out(token);
  output.err(
    `annal: created a token for service account "${account.name}" (access: ${account.access.join(", ")}); it is shown only now: store it in a secret store`,
  );
  return 0;
}

/** `annal token list`: one line per account, or JSON with `--json`. Never a token. */
export async function tokenList(
  deps: Pick<TokenDeps, "pool">,
  options: { json?: boolean },
  output: Output,
): Promise<number> {
  const accounts = await listAccounts(deps.pool);
  if (options.json) {
    output.out(JSON.stringify(accounts, null, 2));
    return 0;
  }
  if (accounts.length === 0) {
    output.out("no service accounts; create one with annal token create --name <n> --access read");
    return 0;
  }
  for (const account of accounts) {
    const state = account.revokedAt ? `revoked ${account.revokedAt.toISOString()}` : "active";
    output.out(
      `${account.name}  access=${account.access.join(",")}  ${state}  created ${account.createdAt.toISOString()}`,
    );
    for (const token of account.tokens) {
      const used = token.lastUsedAt ? `last used ${token.lastUsedAt.toISOString()}` : "never used";
      output.out(
        `  ${token.hint}  created ${token.createdAt.toISOString()}  ${used}${token.revoked ? "  revoked" : ""}`,
      );
    }
  }
  return 0;
}

/** `annal token revoke <name>`. */
export async function tokenRevoke(deps: TokenDeps, name: string, output: Output): Promise<number> {
  await revokeAccount(deps.pool, deps.store, name);
  output.out(`revoked service account "${name}" and its tokens`);
  return 0;
}

/**
 * `annal token create|list|revoke ...`: reads the arguments after `token`, opens the database
 * of the configuration (applying pending migrations, as `annal start` would) and runs the
 * subcommand.
 */
export async function runTokenCommand(args: readonly string[], output: Output): Promise<number> {
  const [subcommand, ...rest] = args;
  const config = { config: { type: "string" } } as const;
  let run: (deps: TokenDeps) => Promise<number>;
  let configPath: string | undefined;
  switch (subcommand) {
    case "create": {
      const { values } = parseCommandLine(
        rest,
        { ...config, name: { type: "string" }, access: { type: "string" } },
        { min: 0, max: 0, what: "" },
      );
      if (values.name === undefined) throw new UsageError("token create needs --name <name>");
      if (values.access === undefined) {
        throw new UsageError("token create needs --access <functions>, e.g. --access read,export");
      }
      const { name, access } = values;
      run = (deps) => tokenCreate(deps, { name, access }, output);
      configPath = values.config;
      break;
    }
    case "list": {
      const { values } = parseCommandLine(
        rest,
        { ...config, json: { type: "boolean" } },
        { min: 0, max: 0, what: "" },
      );
      run = (deps) => tokenList(deps, { json: values.json === true }, output);
      configPath = values.config;
      break;
    }
    case "revoke": {
      const { values, positionals } = parseCommandLine(rest, config, {
        min: 1,
        max: 1,
        what: "the account to revoke: annal token revoke <name>",
      });
      run = (deps) => tokenRevoke(deps, positionals[0]!, output);
      configPath = values.config;
      break;
    }
    default:
      throw new UsageError(
        subcommand === undefined
          ? "token needs a subcommand: create, list or revoke"
          : `unknown token subcommand "${subcommand}"; the subcommands are create, list and revoke`,
      );
  }
  const loaded = await loadConfig({ configPath, argv: [] });
  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(loaded, log);
  try {
    const store = await prepareEventStore(database.pool, log);
    return await run({ pool: database.pool, store });
  } finally {
    await database.close();
  }
}
