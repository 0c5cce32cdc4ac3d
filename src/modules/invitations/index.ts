// The invitations module's public face: offering an existing account a membership it must accept (users, SCIM and
// SSO provisioning call it); the app mounts the routes itself.
export { type Offer, type OfferNotice, offerMembership, renewOffer } from './service.js';
