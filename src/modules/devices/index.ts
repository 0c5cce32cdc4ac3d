// The devices module's public face: the only file other modules (and the app) may import.
export { deviceRoutes } from './routes.js';
export { findDevice } from './service.js';
