import type { AnnalConfig } from "../config/index.ts";

/** A `[[reviews]]` table as the configuration resolved it. */
export type ReviewDefinition = AnnalConfig["reviews"][number];
