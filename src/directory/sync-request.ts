import { BerWriter, Control } from "ldapts";

/**
 * RFC 4533 content synchronization, in the mode `refreshAndPersist` and without a cookie:
 * the server first sends what matches the search now (the refresh), then keeps the search
 * open and sends each entry that comes to match it (the persist stage), until the search is
 * abandoned or ends. OpenLDAP serves it from the `syncprov` overlay; a server without it
 * refuses the search (critical: unavailableCriticalExtension).
 */
export class SyncRequestControl extends Control {
  static readonly OID = "1.3.6.1.4.1.4203.1.9.1.1";

  constructor() {
    super(SyncRequestControl.OID, { critical: true });
  }

  protected override writeControl(writer: BerWriter): void {
    // syncRequestValue ::= SEQUENCE { mode ENUMERATED { refreshOnly (1),
    //   refreshAndPersist (3) }, cookie syncCookie OPTIONAL, reloadHint BOOLEAN DEFAULT FALSE }
    const value = new BerWriter();
    value.startSequence();
    value.writeEnumeration(REFRESH_AND_PERSIST);
    value.endSequence();
    writer.writeBuffer(value.buffer, 0x04);
  }
}

const REFRESH_AND_PERSIST = 3;
