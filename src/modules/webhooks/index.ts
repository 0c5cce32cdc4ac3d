// The webhooks module's public face: the only file other modules may import (the app mounts routes.ts itself). The
// audit writer imports it, so it exports nothing that imports the audit module back (no routes, no service).
export { queueDeliveries } from './fanout.js';
export { WebhookWorker, type WebhookWorkerOptions } from './worker.js';
