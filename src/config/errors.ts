import { AnnalError, type ErrorCode } from "../errors/index.ts";

/**
 * Every failure to turn a configuration file into an `AnnalConfig`. The `code` tells the
 * conditions apart (`ANNAL_CONFIG_NOT_FOUND`, `ANNAL_CONFIG_SYNTAX`, `ANNAL_CONFIG_ENV_MISSING`,
 * `ANNAL_CONFIG_SECRET_LITERAL`, `ANNAL_CONFIG_UNKNOWN_KEY`, `ANNAL_CONFIG_INVALID`,
 * `ANNAL_CONFIG_UNREADABLE`); the fields say where. A message never carries a configured
 * value that could be a secret.
 */
export class ConfigError extends AnnalError {
  /** The configuration file, as resolved (absolute when it came through `loadConfig`). */
  readonly file: string;
  /** The key paths concerned, e.g. `["directory.password"]`; empty when none applies. */
  readonly keys: readonly string[];
  /** 1-based position of a syntax error. */
  readonly line: number | undefined;
  readonly column: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    context: {
      file: string;
      keys?: readonly string[];
      line?: number;
      column?: number;
      hint?: string;
      cause?: unknown;
    },
  ) {
    super(code, message, { hint: context.hint, cause: context.cause });
    this.file = context.file;
    this.keys = context.keys ?? [];
    this.line = context.line;
    this.column = context.column;
  }
}
