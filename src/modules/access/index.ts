// The face of the access module (explain and who-can, the customer's view, just-in-time access, the standing-access
// lapse, break-glass alerts) for other modules: the tenants module mails both sides' admins when mspAccess changes.
// The wiring (app.ts, deps.ts) mounts the routes and starts the lapse sweep from their own files.
export { adminsOfBothSides } from './repo.js';
export { accessMails } from './mail-templates.js';
