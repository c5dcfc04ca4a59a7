import { openDatabase, prepareEventStore } from "../../app/index.ts";
import { listSessions, revokeSession } from "../../auth/index.ts";
import { loadConfig } from "../../config/index.ts";
import { createLogger } from "../../logger.ts";
import type { Output } from "../output.ts";
import { CONFIG_OPTION, type Command } from "../command.ts";
import { parseCommandLine, UsageError } from "../usage.ts";

const SESSIONS_USAGE = `  sessions list [--json] [--config <file>]
      list people's active sessions (by id, never the cookie)
  sessions revoke <id> [--config <file>]
      end a session at once: its cookie is refused from now on`;

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
    ? parseCommandLine(
        rest,
        { ...CONFIG_OPTION, json: { type: "boolean" } },
        { min: 0, max: 0, what: "", command: "sessions list" },
      )
    : parseCommandLine(rest, CONFIG_OPTION, {
        min: 1,
        max: 1,
        what: "the session's id: annal sessions revoke <id>",
        command: "sessions revoke",
      });
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

export const sessionsCommand: Command = {
  name: "sessions",
  usage: SESSIONS_USAGE,
  run: runSessionsCommand,
};
