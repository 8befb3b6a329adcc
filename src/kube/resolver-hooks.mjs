// @ts-check
// A module-resolution hook for the credential child (resolver.mjs): client-node's config.js
// imports its generated API (tens of MB; more than a second of CPU to load) for makeApiClient
// alone, which the child never calls. This answers that one import with a stand-in of the two
// names config.js takes from it (resolver-stand-in.mjs), so that resolving credentials costs a
// fraction of what loading client-node does — on every CLI start, and every few minutes in a
// serving pod, where the child shares the pod's memory limit.

const STAND_IN = new URL('./resolver-stand-in.mjs', import.meta.url).href;

/** @type {import('node:module').ResolveHook} */
export async function resolve(specifier, context, next) {
  if (
    specifier === './gen/index.js' &&
    context.parentURL?.endsWith('/@kubernetes/client-node/dist/config.js')
  ) {
    return { url: STAND_IN, shortCircuit: true };
  }
  return next(specifier, context);
}
