// The contacts module's public face: the only file other modules may import (the app mounts routes.ts itself).
export { findContact } from './service.js';
