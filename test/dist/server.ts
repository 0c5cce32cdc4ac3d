// The built server for the tests of test/dist (the launcher itself is in launch.ts, shared with bench/).
import { vi } from 'vitest';

export { startBuiltServer, startReplica, tokenOf, type BuiltServer } from './launch.js';

// Each step is several requests to another process (argon2 hashes among them) on a shared 2-core machine: give them
// time (speed is measured in bench/, not here).
vi.setConfig({ testTimeout: 120_000 });
