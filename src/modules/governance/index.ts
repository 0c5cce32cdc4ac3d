// The face of the governance module (explain and who-can, the customer's view, just-in-time access, the standing-access
// lapse, break-glass alerts). No other module needs any of it: what the tenants module shares with it (both sides'
// admins, the access mails) is in the access core (src/access/repo.ts, src/access/mails.ts). The wiring (app.ts,
// deps.ts) mounts the routes and starts the lapse sweep from their own files.
export {};
