// The scripts module's public face: the only file other modules (and the app) may import.
export { scriptRoutes } from './routes.js';
