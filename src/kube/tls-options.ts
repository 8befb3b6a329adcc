// The client's TLS options, from the cluster access's material: the five fields named
// once, for the HTTP/1.1 agent, the HTTP/2 connection, and the comparison that decides
// whether a refresh needs new connections.

import type { ClientTls } from './credentials.js';

export interface ClientTlsOptions {
  readonly ca: Buffer | undefined;
  readonly cert: Buffer | undefined;
  readonly key: Buffer | undefined;
  readonly rejectUnauthorized: boolean;
  readonly servername: string | undefined;
}

/** What a TLS connection to the API server is opened with. */
export function clientTlsOptions(material: ClientTls): ClientTlsOptions {
  const { ca, cert, key, rejectUnauthorized, servername } = material;
  return { ca, cert, key, rejectUnauthorized, servername };
}

/** The options as text, bytes in base64: equal exactly when the options are. */
export function tlsFingerprint(material: ClientTls): string[] {
  return Object.values(clientTlsOptions(material)).map((value) =>
    Buffer.isBuffer(value) ? value.toString('base64') : String(value),
  );
}

/** Whether connections opened with `a` cannot serve `b`. */
export function tlsDiffers(a: ClientTls, b: ClientTls): boolean {
  const [x, y] = [tlsFingerprint(a), tlsFingerprint(b)];
  return x.some((value, at) => value !== y[at]);
}
