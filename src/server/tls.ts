// Serving certificate reload. cert-manager and the kubelet rotate mounted
// certificates in place (an atomic symlink swap), so the files are polled and a
// changed, valid pair replaces the secure context for new connections;
// connections already open keep theirs and are not dropped. The CA that client
// certificates must chain to (--client-ca-file) is part of the same context, so
// it is reloaded with them.

import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:https';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { type Clock, every, systemClock } from '../runtime/index.js';

export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** The CA a client certificate must be signed by; none: no client certificate is asked. */
  readonly clientCaFile?: string;
}

export interface ServingTls {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly clientCa?: Buffer;
}

const MIN_TLS_VERSION = 'TLSv1.2';

/** Reads and validates the files; throws with a message naming the file when one is unusable. */
export async function readServingTls(files: TlsFiles): Promise<ServingTls> {
  const [cert, key, clientCa] = await readTlsFiles(files);
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new Error(
      `${files.certFile} and ${files.keyFile} are not a usable certificate and key: ${(error as Error).message}`,
    );
  }
  if (clientCa === undefined) return { cert, key };
  try {
    new X509Certificate(clientCa);
  } catch (error) {
    throw new Error(
      `${files.clientCaFile} is not a PEM CA certificate: ${(error as Error).message}`,
    );
  }
  return { cert, key, clientCa };
}

/** What a server's secure context is made of: the pair, TLS ≥ 1.2, and the client CA if any. */
export function secureContextOptions(material: {
  readonly cert: Buffer | string;
  readonly key: Buffer | string;
  readonly clientCa?: Buffer | string;
}): SecureContextOptions {
  return {
    cert: material.cert,
    key: material.key,
    minVersion: MIN_TLS_VERSION,
    ...(material.clientCa ? { ca: material.clientCa } : {}),
  };
}

function readTlsFiles(files: TlsFiles): Promise<[Buffer, Buffer, Buffer | undefined]> {
  return Promise.all([
    readFile(files.certFile),
    readFile(files.keyFile),
    files.clientCaFile === undefined ? undefined : readFile(files.clientCaFile),
  ]);
}

const sameBytes = (a: Buffer | undefined, b: Buffer | undefined) =>
  a === undefined || b === undefined ? a === b : a.equals(b);

interface TlsReloaderEvents {
  onReload(material: ServingTls): void;
  onError(error: Error): void;
}

/**
 * Polls the files every `intervalMs` and gives each server the new context (the webhook's
 * port and, with a client CA, the probes' port); returns a function that stops polling.
 */
export function watchTlsFiles(
  servers: Server | readonly Server[],
  files: TlsFiles,
  current: ServingTls,
  intervalMs: number,
  events: TlsReloaderEvents,
  clock: Clock = systemClock,
): () => void {
  let loaded = current;
  let lastError = '';
  let polling = false;
  const poll = async (): Promise<void> => {
    if (polling) return;
    polling = true;
    try {
      const [cert, key, clientCa] = await readTlsFiles(files);
      if (
        cert.equals(loaded.cert) &&
        key.equals(loaded.key) &&
        sameBytes(clientCa, loaded.clientCa)
      ) {
        return;
      }
      // A half-written pair (new cert, old key) fails here and is retried next poll.
      const material = await readServingTls(files);
      for (const server of [servers].flat()) {
        server.setSecureContext(secureContextOptions(material));
      }
      loaded = material;
      lastError = '';
      events.onReload(material);
    } catch (error) {
      const message = (error as Error).message;
      if (message !== lastError) events.onError(error as Error);
      lastError = message;
    } finally {
      polling = false;
    }
  };
  return every(clock, intervalMs, () => void poll(), { keepAlive: false });
}
