import { schemaNames, tableIn } from "../projector/index.ts";

/** The projections' live tables, quoted and schema-qualified (never user input). */
export const ENTRIES = tableIn(schemaNames("entries").live)("entries");
export const ENTRY_VERSIONS = tableIn(schemaNames("entry_versions").live)("entry_versions");
export const CHANGES = tableIn(schemaNames("changes").live)("changes");
