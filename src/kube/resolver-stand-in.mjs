// @ts-check
// What the credential child loads in place of client-node's generated API (resolver-hooks.mjs):
// the two names client-node's config.js imports from it, neither of which the child uses.

export function createConfiguration() {
  throw new Error("client-node's API is not loaded in the credential child");
}

export class ServerConfiguration {}
