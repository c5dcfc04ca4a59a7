/**
 * A tiny valid baseline JPEG: one 8×8 block of a single colour (YCbCr, no subsampling). Small
 * enough to put in every demo photo, real enough that any decoder shows a coloured square.
 *
 * With a flat block only the DC coefficient is non-zero, so the scan is, per component, the DC
 * difference (Huffman code of its size category, then its bits) and an end-of-block. The DC
 * table gives category c the 4-bit code c; the AC table holds end-of-block only, as code `0`.
 */
export function flatColourJpeg(rgb: readonly [number, number, number]): Buffer {
  const [r, g, b] = rgb;
  const y = 0.299 * r + 0.587 * g + 0.114 * b;
  const cb = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b;
  const cr = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b;

  const bits = new BitWriter();
  for (const level of [y, cb, cr]) {
    // The DCT of a flat block: F(0,0) = 8 × (level − 128); the quantizer is all ones.
    const dc = Math.max(-1024, Math.min(1016, Math.round(8 * (level - 128))));
    const category = dc === 0 ? 0 : Math.floor(Math.log2(Math.abs(dc))) + 1;
    bits.write(category, 4);
    // negative values are written as their ones' complement in `category` bits
    if (category > 0) bits.write(dc > 0 ? dc : dc + (1 << category) - 1, category);
    bits.write(0, 1); // end of block
  }

  const segment = (marker: number, body: number[]): number[] => [
    0xff,
    marker,
    (body.length + 2) >> 8,
    (body.length + 2) & 0xff,
    ...body,
  ];
  return Buffer.from([
    0xff,
    0xd8, // SOI
    ...segment(0xdb, [0x00, ...new Array<number>(64).fill(1)]), // DQT 0: all ones
    ...segment(0xc0, [8, 0, 8, 0, 8, 3, 1, 0x11, 0, 2, 0x11, 0, 3, 0x11, 0]), // SOF0 8×8, 3 comps
    ...segment(0xc4, [0x00, 0, 0, 0, 12, ...new Array<number>(12).fill(0), ...range(12)]), // DC 0
    ...segment(0xc4, [0x10, 1, ...new Array<number>(15).fill(0), 0x00]), // AC 0: EOB only
    ...segment(0xda, [3, 1, 0x00, 2, 0x00, 3, 0x00, 0, 63, 0]), // SOS
    ...bits.bytes(),
    0xff,
    0xd9, // EOI
  ]);
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

class BitWriter {
  private readonly out: number[] = [];
  private current = 0;
  private used = 0;

  write(value: number, count: number): void {
    for (let i = count - 1; i >= 0; i--) {
      this.current = (this.current << 1) | ((value >> i) & 1);
      if (++this.used === 8) this.flush();
    }
  }

  /** Pads the last byte with ones and stuffs a zero after every 0xFF, as entropy data needs. */
  bytes(): number[] {
    while (this.used !== 0) this.write(1, 1);
    return this.out;
  }

  private flush(): void {
    this.out.push(this.current);
    if (this.current === 0xff) this.out.push(0x00);
    this.current = 0;
    this.used = 0;
  }
}
