// The custom-fields module's public face: the only file other modules (and the app) may import.
export { customFieldRoutes } from './routes.js';
