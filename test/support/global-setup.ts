import { ensureBuilt } from '../../scripts/built-server.js';
import { prepareTemplate } from './db.js';

export default async function setup() {
  // The tests of the built server (test/dist, test/platform/start) run what `npm start` runs, built from these sources.
  ensureBuilt();
  await prepareTemplate();
}
