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

/** Another retention run holds the log. */
export class RetentionInProgressError extends AnnalError {
  constructor() {
    super("ANNAL_RETENTION_IN_PROGRESS", "another retention run is removing old events now", {
      status: 409,
    });
  }
}

/** A moment before the retention horizon: the log no longer holds what was true then. */
export class BeforeRetentionError extends AnnalError {
  readonly horizon: Date;

  constructor(parameter: string, at: Date, horizon: Date) {
    super(
      "ANNAL_BEFORE_RETENTION",
      `${parameter} ${at.toISOString()} is before the retention horizon ${horizon.toISOString()}: the log keeps no history before it`,
      { details: { parameter, at: at.toISOString(), horizon: horizon.toISOString() } },
    );
    this.horizon = horizon;
  }
}

/** An erasure without a reason. */
export class ErasureReasonMissingError extends AnnalError {
  constructor() {
    super("ANNAL_ERASURE_REASON_MISSING", "an erasure needs a reason, which its event records", {
      details: { parameter: "reason" },
    });
  }
}

/** An erasure of an entry the log never recorded. */
export class ErasureEntryUnknownError extends AnnalError {
  constructor(entry: string) {
    super("ANNAL_ERASURE_ENTRY_UNKNOWN", `the log has never recorded the entry ${entry}`, {
      details: { entry },
    });
  }
}

/** An erasure of an entry still in the directory. */
export class ErasureEntryPresentError extends AnnalError {
  constructor(entry: string) {
    super(
      "ANNAL_ERASURE_ENTRY_PRESENT",
      `the entry ${entry} is still in the directory: its values would be recorded again`,
      { details: { entry } },
    );
  }
}
