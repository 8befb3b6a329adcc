// Serving certificate reload. cert-manager and the kubelet rotate mounted
// certificates in place (an atomic symlink swap), so the files are polled and a
// changed, valid pair replaces the secure context for new connections;
// connections already open keep theirs and are not dropped.

import { readFile } from 'node:fs/promises';
import type { Server } from 'node:https';
import { createSecureContext } from 'node:tls';

export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

export interface TlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
}

export const MIN_TLS_VERSION = 'TLSv1.2';

/** Reads and validates a pair; throws with a message naming the files when it is unusable. */
export async function readTlsMaterial(files: TlsFiles): Promise<TlsMaterial> {
  const [cert, key] = await Promise.all([readFile(files.certFile), readFile(files.keyFile)]);
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new Error(
      `${files.certFile} and ${files.keyFile} are not a usable certificate and key: ${(error as Error).message}`,
    );
  }
  return { cert, key };
}

export interface TlsReloaderEvents {
  onReload(material: TlsMaterial): void;
  onError(error: Error): void;
}

/** Polls the files every `intervalMs`; returns a function that stops polling. */
export function watchTlsFiles(
  server: Server,
  files: TlsFiles,
  current: TlsMaterial,
  intervalMs: number,
  events: TlsReloaderEvents,
): () => void {
  let loaded = current;
  let lastError = '';
  let polling = false;
  const poll = async (): Promise<void> => {
    if (polling) return;
    polling = true;
    try {
      const [cert, key] = await Promise.all([readFile(files.certFile), readFile(files.keyFile)]);
      if (cert.equals(loaded.cert) && key.equals(loaded.key)) return;
      // A half-written pair (new cert, old key) fails here and is retried next poll.
      const material = await readTlsMaterial(files);
      server.setSecureContext({
        cert: material.cert,
        key: material.key,
        minVersion: MIN_TLS_VERSION,
      });
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
  const timer = setInterval(() => void poll(), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
