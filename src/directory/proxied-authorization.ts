import { Control, type BerWriter } from "ldapts";

/**
 * RFC 4370 proxied authorization: the operation runs with the rights of `authzId` instead of
 * the bound account's, and slapd's accesslog records `authzId` (without its `dn:`) in
 * `reqAuthzID`. The RFC requires the control to be critical.
 */
export class ProxiedAuthorizationControl extends Control {
  static readonly OID = "2.16.840.1.113730.3.4.18";
  readonly authzId: string;

  constructor(authzId: string) {
    super(ProxiedAuthorizationControl.OID, { critical: true });
    this.authzId = authzId;
  }

  protected override writeControl(writer: BerWriter): void {
    // the control value is the authzId itself, not a BER structure around it
    writer.writeString(this.authzId);
  }
}

/** `uid=alice,...` becomes `dn:uid=alice,...`; an authzId already written `dn:` or `u:` is kept. */
export function authzIdFor(identity: string): string {
  return /^(dn|u):/i.test(identity) ? identity : `dn:${identity}`;
}
