import { openDatabase, prepareEventStore } from "../../app/index.ts";
import {
  ACCESS_MEANINGS,
  accessOf,
  changeAccess,
  createToken,
  listAccounts,
  parseAccess,
  revokeAccount,
  type AccessChange,
  type AccessFunction,
} from "../../auth/index.ts";
import type { Output } from "../output.ts";
import { parseCommandLine, UsageError } from "../usage.ts";
import { loadConfig } from "../../config/index.ts";
import type { Pool } from "../../db/index.ts";
import { createLogger } from "../../logger.ts";
import type { EventStore } from "../../store/index.ts";
import type { CommandModule } from "../command.ts";
import { TOKEN_CREATE, TOKEN_ACCESS, TOKEN_LIST, TOKEN_REVOKE } from "../registry.ts";

/** What the token commands work on. */
export interface TokenDeps {
  readonly pool: Pool;
  readonly store: EventStore;
}

/**
 * `annal token create`: prints the token alone on standard output (so `$(annal token create
 * ...)` captures it) and a note on standard error. Only its digest is stored: it is never
 * shown again. An existing account keeps its access; the note says so when `--access` asked
 * for other access, and how to change it.
 */
export async function tokenCreate(
  deps: TokenDeps,
  options: { name: string; access: string },
  output: Output,
): Promise<number> {
  const requested = parseAccess(options.access);
  const { account, token, accessKept } = await createToken(deps.pool, deps.store, {
    name: options.name,
    access: requested,
  });
  output.out(token);
  output.err(
    `annal: created a token for service account "${account.name}" (access: ${account.access.join(", ")}); it is shown only now: store it in a secret store`,
  );
  if (accessKept) {
    const missing = requested.filter((fn) => !account.access.includes(fn));
    const change =
      missing.length > 0 && account.access.every((fn) => requested.includes(fn))
        ? `--add ${missing.join(",")}`
        : `--set ${requested.join(",")}`;
    output.err(
      `annal: service account "${account.name}" keeps its access (${account.access.join(", ")}); --access ${requested.join(",")} was not applied. To change it: annal token access ${account.name} ${change}`,
    );
  }
  return 0;
}

/**
 * `annal token access <name>`: with `--set`, `--add` or `--remove` (one of them), changes the
 * account's access; without, shows it. Prints what the account can do, one function a line.
 */
export async function tokenAccess(
  deps: TokenDeps,
  name: string,
  options: { set?: string; add?: string; remove?: string },
  output: Output,
): Promise<number> {
  const given = (["set", "add", "remove"] as const).filter((key) => options[key] !== undefined);
  if (given.length > 1) {
    throw new UsageError("token access takes one of --set, --add or --remove, not several");
  }
  const key = given[0];
  if (key === undefined) {
    output.out(`service account "${name}" can: ${describe(await accessOf(deps.pool, name))}`);
    return 0;
  }
  const functions = parseAccess(options[key]!);
  const change = { [key]: functions } as unknown as AccessChange;
  const { previous, access } = await changeAccess(deps.pool, deps.store, name, change);
  const unchanged = previous.join() === access.join();
  output.out(`service account "${name}" can ${unchanged ? "still" : "now"}: ${describe(access)}`);
  return 0;
}

function describe(access: readonly AccessFunction[]): string {
  return access.map((fn) => `${fn} (${ACCESS_MEANINGS[fn]})`).join(", ");
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
 * `annal token create|access|list|revoke ...`: reads the arguments after `token`, opens the database
 * of the configuration (applying pending migrations, as `annal start` would) and runs the
 * subcommand.
 */
export async function runTokenCommand(args: readonly string[], output: Output): Promise<number> {
  const [subcommand, ...rest] = args;
  let run: (deps: TokenDeps) => Promise<number>;
  let configPath: string | undefined;
  switch (subcommand) {
    case "create": {
      const { values } = parseCommandLine(rest, TOKEN_CREATE);
      if (values.name === undefined) throw new UsageError("token create needs --name <name>");
      if (values.access === undefined) {
        throw new UsageError("token create needs --access <functions>, e.g. --access read,export");
      }
      const { name, access } = values;
      run = (deps) => tokenCreate(deps, { name, access }, output);
      configPath = values.config;
      break;
    }
    case "access": {
      const { values, positionals } = parseCommandLine(rest, TOKEN_ACCESS);
      const { set, add, remove } = values;
      if ([set, add, remove].filter((v) => v !== undefined).length > 1) {
        throw new UsageError("token access takes one of --set, --add or --remove, not several");
      }
      run = (deps) => tokenAccess(deps, positionals[0]!, { set, add, remove }, output);
      configPath = values.config;
      break;
    }
    case "list": {
      const { values } = parseCommandLine(rest, TOKEN_LIST);
      run = (deps) => tokenList(deps, { json: values.json === true }, output);
      configPath = values.config;
      break;
    }
    case "revoke": {
      const { values, positionals } = parseCommandLine(rest, TOKEN_REVOKE);
      run = (deps) => tokenRevoke(deps, positionals[0]!, output);
      configPath = values.config;
      break;
    }
    default:
      throw new UsageError(
        subcommand === undefined
          ? "token needs a subcommand: create, access, list or revoke"
          : `unknown token subcommand "${subcommand}"; the subcommands are create, access, list and revoke`,
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

export const command: CommandModule = {
  run: runTokenCommand,
};
