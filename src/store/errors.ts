import { AnnalError } from "../errors/index.ts";
import type { ExpectedVersion } from "./types.ts";

/** An append stated a version the stream is no longer at (someone else appended first). */
export class WrongExpectedVersionError extends AnnalError {
  readonly streamId: string;
  readonly expected: ExpectedVersion;
  readonly actual: number;

  constructor(streamId: string, expected: ExpectedVersion, actual: number) {
    super(
      "ANNAL_WRONG_EXPECTED_VERSION",
      `stream ${streamId} is at version ${actual}, the append expected ${String(expected)}`,
      { status: 409, hint: "read the stream again and retry the append with its current version" },
    );
    this.streamId = streamId;
    this.expected = expected;
    this.actual = actual;
  }
}

/** A cursor that is not one of ours, or that was tampered with. */
export class InvalidCursorError extends AnnalError {
  constructor(message = "the cursor is not valid") {
    super("ANNAL_CURSOR_INVALID", message, {
      status: 400,
      hint: "pass a cursor exactly as annal returned it",
    });
  }
}

/** A well-formed cursor from another database, or from a restored copy of this one. */
export class ForeignCursorError extends AnnalError {
  constructor() {
    super(
      "ANNAL_CURSOR_FOREIGN",
      "the cursor comes from another database (or from a copy restored from a backup); positions in it do not apply here",
      {
        status: 400,
        hint: "start reading again from the beginning, or from a cursor of this database",
      },
    );
  }
}
