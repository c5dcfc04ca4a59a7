import { Control } from "ldapts";

/**
 * Active Directory's Show Deleted control (LDAP_SERVER_SHOW_DELETED_OID, MS-ADTS 3.1.1.3.4.1.14):
 * a search also finds deleted objects (tombstones, `isDeleted: TRUE`, under the naming
 * context's `CN=Deleted Objects`), which AD hides otherwise. It has no value. Critical: a
 * server that does not know it must refuse the search, not answer it without the deleted
 * objects as if there were none.
 */
export class ShowDeletedControl extends Control {
  static readonly OID = "1.2.840.113556.1.4.417";

  constructor() {
    // No controlValue: ldapts's Control writes none.
    super(ShowDeletedControl.OID, { critical: true });
  }
}
