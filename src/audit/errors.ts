import { AnnalError } from "../errors/index.ts";

/** `annal log verify` met an event that does not match the chain. */
export class LogTamperedError extends AnnalError {
  /** The first event that does not match. */
  readonly position: number;

  constructor(position: number, why: string) {
    super("ANNAL_LOG_TAMPERED", `event ${position} does not match the log's hash chain: ${why}`, {
      details: { position },
    });
    this.position = position;
  }
}

/** `--from` or `--to` names an event the chain does not hold. */
export class LogPositionUnknownError extends AnnalError {
  readonly position: number;

  constructor(position: number, option: string) {
    super(
      "ANNAL_LOG_POSITION_UNKNOWN",
      `--${option} ${position}: no event at that position is chained`,
      {
        details: { parameter: option, position },
      },
    );
    this.position = position;
  }
}
