// The config-items module's public face: the only file other modules (and the app) may import. The ownership rules
// of partner-wide configuration (ownership.ts) are shared with scripts and custom fields.
export { configItemRoutes } from './routes.js';
export {
  assertMayChange,
  assertPartnerWide,
  isStorable,
  listTarget,
  name255,
  nameCursor,
  ownerForCreate,
  sourceOf,
  storableString,
  type Source,
} from './ownership.js';
