// What the serving process makes of client-node's answer from the child
// (src/kube/credentials.ts): headers, TLS material, when to ask again.

import { describe, expect, it } from 'vitest';
import {
  accessFromReply,
  DYNAMIC_REFRESH_MS,
  KubeconfigError,
  refreshTime,
} from '../../src/kube/credentials.js';

const NOW = Date.UTC(2026, 0, 1);

function jwt(claims: object): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'RS256' })}.${part(claims)}.c2lnbmF0dXJl`;
}

describe('accessFromReply', () => {
  it('lower-cases header names and turns basic auth into an authorization header', () => {
    const access = accessFromReply(
      {
        server: 'https://api.example:6443/',
        headers: { 'X-Extra': 'v' },
        basicAuth: 'admin:pw',
        dynamic: false,
      },
      NOW,
    );
    expect(access.headers).toEqual({
      'x-extra': 'v',
      authorization: `Basic ${Buffer.from('admin:pw').toString('base64')}`,
    });
    expect(access.server.href).toBe('https://api.example:6443/');
    expect(access.refreshAt).toBeUndefined();
  });

  it('decodes the TLS material and keeps verification on unless the kubeconfig turned it off', () => {
    const pem = (label: string) => `-----BEGIN ${label}-----\n...\n`;
    const base64 = (text: string) => Buffer.from(text).toString('base64');
    const access = accessFromReply(
      {
        server: 'https://api.example',
        ca: base64(pem('CA')),
        cert: base64(pem('CERT')),
        key: base64(pem('KEY')),
        headers: {},
        dynamic: false,
      },
      NOW,
    );
    expect(access.tls.ca?.toString()).toBe(pem('CA'));
    expect(access.tls.cert?.toString()).toBe(pem('CERT'));
    expect(access.tls.key?.toString()).toBe(pem('KEY'));
    expect(access.tls.rejectUnauthorized).toBe(true);
    const insecure = accessFromReply(
      { server: 'https://api.example', headers: {}, rejectUnauthorized: false, dynamic: false },
      NOW,
    );
    expect(insecure.tls.rejectUnauthorized).toBe(false);
  });

  it('carries the context namespace', () => {
    const reply = { server: 'https://x', namespace: 'shop', headers: {}, dynamic: false };
    expect(accessFromReply(reply, NOW).namespace).toBe('shop');
  });

  it('reports a kubeconfig mistake as a KubeconfigError with the child message', () => {
    expect(() => accessFromReply({ error: 'cannot load the kubeconfig: bad' }, NOW)).toThrow(
      new KubeconfigError('cannot load the kubeconfig: bad'),
    );
  });

  it('asks again later only for credentials that change on their own', () => {
    const reply = { server: 'https://x', headers: { authorization: 'Bearer opaque' } };
    expect(accessFromReply({ ...reply, dynamic: false }, NOW).refreshAt).toBeUndefined();
    expect(accessFromReply({ ...reply, dynamic: true }, NOW).refreshAt).toBe(
      NOW + DYNAMIC_REFRESH_MS,
    );
  });
});

describe('refreshTime', () => {
  it.each([
    ['an opaque token', 'Bearer k8s-aws-v1.abc', NOW + DYNAMIC_REFRESH_MS],
    ['no token (exec gave a client certificate)', undefined, NOW + DYNAMIC_REFRESH_MS],
    [
      'a JWT that expires in an hour',
      `Bearer ${jwt({ exp: NOW / 1000 + 3600 })}`,
      NOW + DYNAMIC_REFRESH_MS,
    ],
    [
      'a JWT that expires in 2 minutes: halfway',
      `Bearer ${jwt({ exp: NOW / 1000 + 120 })}`,
      NOW + 60_000,
    ],
    [
      'a JWT about to expire: not sooner than 10 s',
      `Bearer ${jwt({ exp: NOW / 1000 + 2 })}`,
      NOW + 10_000,
    ],
    ['a JWT without exp', `Bearer ${jwt({ sub: 'x' })}`, NOW + DYNAMIC_REFRESH_MS],
    ['a malformed JWT payload', 'Bearer aaa.!!!.ccc', NOW + DYNAMIC_REFRESH_MS],
  ])('%s', (_name, authorization, expected) => {
    expect(refreshTime(authorization, NOW)).toBe(expected);
  });
});
