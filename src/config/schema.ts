import { z } from "zod";
import type { SectionContext } from "./fields.ts";
import { sections } from "./sections/index.ts";

type Sections = typeof sections;
type Shape = { [Name in keyof Sections]: ReturnType<Sections[Name]> };

/** The whole file: the sections and nothing else. */
export function configSchema(ctx: SectionContext) {
  const shape = Object.fromEntries(
    Object.entries(sections).map(([name, section]) => [name, section(ctx)]),
  ) as Shape;
  return z.strictObject(shape);
}

export type ConfigSchema = ReturnType<typeof configSchema>;
