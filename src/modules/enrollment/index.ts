// The enrollment module's public face: the only file other modules may import. Its routes are mounted by devices.
export {
  createdKey,
  createKeyBody,
  enrollBody,
  enrollResponse,
  inventoryBody,
  keyJson,
  keyListQuery,
} from './schemas.js';
export { createKey, deleteKey, enroll, findKey, keyToJson, listKeys, reportInventory } from './service.js';
