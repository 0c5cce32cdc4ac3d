// Transition: the catalogue moved to src/access/catalog.ts. Tests, bench and the
// auth and contacts files (open elsewhere) still import it here; delete once they import src/access/catalog.ts.
export * from '../../access/catalog.js';
