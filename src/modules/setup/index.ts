// The setup module's public face (the app mounts routes.ts itself; the CLI's setup command takes its lock here).
export { assertSetupOpen, issueSetupLink, SETUP_TTL_MS } from './service.js';
