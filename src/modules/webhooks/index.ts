// The webhooks module's public face: the only file other modules (and the app) may import.
export { queueDeliveries } from './fanout.js';
export { webhookRoutes } from './routes.js';
export { WebhookWorker, type WebhookWorkerOptions } from './worker.js';
