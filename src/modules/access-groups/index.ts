// The face of the access-groups module. No other module needs any of it: what the access decision reads of a group
// is in the access core (src/access/relationships.ts); the app mounts routes.ts itself.
export {};
