/** The event a mutation's directory write is recorded by, before it is made. */
export const DIRECTORY_WRITE_REQUESTED = "DirectoryWriteRequested";

/** What `DirectoryWriteRequested` records: who asked for which write (never values). */
export interface DirectoryWriteRequested {
  readonly requestId: string;
  readonly operation: "add" | "modify" | "modifyDN" | "delete";
  readonly dn: string;
  readonly newDN: string | null;
  /** The attributes a modify touches. */
  readonly attributes: readonly string[];
  /** The identity the directory records the write as. */
  readonly actor: string;
  /** The account the mutation was made for. */
  readonly account: { readonly id: string; readonly name: string };
}
