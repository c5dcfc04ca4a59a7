export { accessProjection } from "./projection.ts";
export {
  ACCESS_PROJECTION,
  ACCESS_TABLES,
  type AccountVersionRow,
  type ActivationRow,
} from "./tables.ts";
