/** The event of a change capture could not record, on the stream `CAPTURE_FAILURES_STREAM`. */
export const CHANGE_NOT_RECORDED = "DirectoryChangeNotRecorded";
export const CAPTURE_FAILURES_STREAM = "capture-failures";

/** What `DirectoryChangeNotRecorded` records: which change, and why; never a value. */
export interface DirectoryChangeNotRecorded {
  /** `accesslog` or `poll`. */
  readonly source: string;
  /**
   * The source's identity of the change: the accesslog's `reqStart`; for poll, the entry, the
   * stream version the change follows and a digest of the state it left
   * (`<entryUUID>:<version>:<sha256>`, src/capture/polled-change.ts).
   */
  readonly changeId: string;
  readonly dn: string;
  readonly entryUUID: string | null;
  readonly error: {
    readonly code: string;
    /** PostgreSQL's SQLSTATE when the database refused it. */
    readonly sqlstate: string | null;
    readonly message: string;
  };
}
