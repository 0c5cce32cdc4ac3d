// The users module's public face: the only file other modules may import (the app mounts the routes itself).
export { assertTargetWithinCeiling, consented } from './guards.js';
export { deleteMembership, findMember, setMembershipRole } from './repo.js';
