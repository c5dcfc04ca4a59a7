import { openDatabase, prepareEventStore } from "../../app/index.ts";
import { listSessions, revokeSession } from "../../auth/index.ts";
import { loadConfig } from "../../config/index.ts";
import { createLogger } from "../../logger.ts";
import type { Output } from "../output.ts";
import type { CommandModule } from "../command.ts";
import { SESSIONS_LIST, SESSIONS_REVOKE } from "../registry.ts";
import { parseCommandLine, UsageError } from "../usage.ts";

export async function runSessionsCommand(args: readonly string[], output: Output): Promise<number> {
  const [subcommand, ...rest] = args;
  if (subcommand !== "list" && subcommand !== "revoke") {
    throw new UsageError(
      subcommand === undefined
        ? "sessions needs a subcommand: list or revoke"
        : `unknown sessions subcommand "${subcommand}"; the subcommands are list and revoke`,
    );
  }
  const list = subcommand === "list";
  const { values, positionals } = list
    ? parseCommandLine(rest, SESSIONS_LIST)
    : parseCommandLine(rest, SESSIONS_REVOKE);
  const config = await loadConfig({ configPath: values.config, argv: [] });
  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(config, log);
  try {
    const store = await prepareEventStore(database.pool, log);
    if (subcommand === "revoke") {
      await revokeSession(database.pool, store, positionals[0]!, "annal sessions revoke");
      output.out(`revoked session ${positionals[0]!}`);
      return 0;
    }
    const sessions = await listSessions(database.pool, config.auth.session);
    if ("json" in values && values.json === true) {
      output.out(JSON.stringify(sessions, null, 2));
      return 0;
    }
    if (sessions.length === 0) output.out("no active sessions");
    for (const s of sessions) {
      output.out(
        `${s.id}  ${s.origin}:${s.account}  ${s.method}  started ${s.createdAt.toISOString()}  last seen ${s.lastSeenAt.toISOString()}  expires ${s.expiresAt.toISOString()}`,
      );
    }
    return 0;
  } finally {
    await database.close();
  }
}

export const command: CommandModule = {
  run: runSessionsCommand,
};
