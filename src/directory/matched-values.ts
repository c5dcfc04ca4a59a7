import { BerWriter, Control, type Filter } from "ldapts";

/**
 * RFC 3876 matched values: the server returns, of each entry it finds, only the attribute
 * values that match one of the control's simple filter items (equality, presence, ...).
 * OpenLDAP leaves out every attribute that no item names, so a caller that wants other
 * attributes whole names them with a presence item. Not critical: a server without the
 * control returns every value, which costs more but answers the same question.
 */
export class MatchedValuesControl extends Control {
  static readonly OID = "1.2.826.0.1.3344810.2.3";
  readonly items: readonly Filter[];

  constructor(items: readonly Filter[]) {
    super(MatchedValuesControl.OID, { critical: false });
    this.items = items;
  }

  protected override writeControl(writer: BerWriter): void {
    // ValuesReturnFilter ::= SEQUENCE OF SimpleFilterItem, whose choices are encoded as the
    // search filter's own (equalityMatch [3], present [7], ...), inside the OCTET STRING.
    const value = new BerWriter();
    value.startSequence();
    for (const item of this.items) item.write(value);
    value.endSequence();
    writer.writeBuffer(value.buffer, 0x04);
  }
}
