/** The parts one annal process can run; `--only <part>` runs one of them alone. */
export const ANNAL_PARTS = ["api", "workers", "projector"] as const;
export type AnnalPart = (typeof ANNAL_PARTS)[number];

export function isAnnalPart(value: string): value is AnnalPart {
  return (ANNAL_PARTS as readonly string[]).includes(value);
}
