/** The `annal` command line. */
export { main } from "./main.ts";
