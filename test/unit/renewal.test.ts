// Self-managed certificates, the pure decisions (src/certs/renewal.ts): when a
// certificate is due, what a replica does with what it finds in the Secret, and
// what the facts about real PEMs are.

import { describe, expect, it } from 'vitest';
import {
  generateCertificateAuthority,
  generateServingCertificate,
} from '../../src/certs/generate.js';
import {
  CERT_KEYS,
  type CertificateFacts,
  type CertificatePlan,
  caBundleAfterRotation,
  inspectCertificates,
  isRenewalDue,
  planCertificates,
  type StoredCertificates,
  type Validity,
} from '../../src/certs/renewal.js';
import { checkHashKey } from '../../src/hash-key/secret.js';
import { named } from '../support/named.js';

const DAY = 86_400_000;
const T0 = new Date('2030-01-01T00:00:00Z');
const at = (days: number) => new Date(T0.getTime() + days * DAY);
const valid = (fromDay: number, toDay: number): Validity => ({
  notBefore: at(fromDay),
  notAfter: at(toDay),
});

describe('isRenewalDue: renew once less than a third of the lifetime is left', () => {
  it.each(
    named([
      { name: 'fresh', validity: valid(0, 300), now: at(1), due: false },
      {
        name: 'two thirds used, to the day: not yet',
        validity: valid(0, 300),
        now: at(199),
        due: false,
      },
      { name: 'just past two thirds', validity: valid(0, 300), now: at(201), due: true },
      { name: 'expired', validity: valid(0, 300), now: at(301), due: true },
      {
        name: 'not yet valid (a replica with a slow clock) is not a reason to renew',
        validity: valid(1, 301),
        now: at(0),
        due: false,
      },
      { name: 'a zero lifetime is always due', validity: valid(5, 5), now: at(0), due: true },
    ]),
  )('%s', (_name, row) => {
    expect(isRenewalDue(row.validity, row.now)).toBe(row.due);
  });
});

const good: CertificateFacts = {
  authority: valid(0, 3650),
  authorityKeyMatches: true,
  serving: valid(0, 365),
  servingKeyMatches: true,
  servingSignedByAuthority: true,
  missingHosts: [],
};

describe('planCertificates: what a replica does with what it finds', () => {
  const present = (facts: Partial<CertificateFacts>): StoredCertificates => ({
    state: 'present',
    facts: { ...good, ...facts },
  });
  it.each(
    named<{ name: string; stored: StoredCertificates; now: Date; plan: CertificatePlan['action'] }>(
      [
        {
          name: 'nothing stored: create (never replace)',
          stored: { state: 'absent' },
          now: at(1),
          plan: 'create',
        },
        { name: 'a good pair is kept', stored: present({}), now: at(1), plan: 'keep' },
        {
          name: 'an unusable Secret gets a new CA',
          stored: { state: 'unusable', reason: 'no ca.key' },
          now: at(1),
          plan: 'new-authority',
        },
        {
          name: 'a CA key that does not match gets a new CA',
          stored: present({ authorityKeyMatches: false }),
          now: at(1),
          plan: 'new-authority',
        },
        {
          name: 'a CA two thirds through its life is rotated',
          stored: present({}),
          now: at(2500),
          plan: 'new-authority',
        },
        {
          name: 'a serving certificate two thirds through its life is renewed',
          stored: present({}),
          now: at(250),
          plan: 'renew-serving',
        },
        {
          name: 'an expired serving certificate is renewed',
          stored: present({}),
          now: at(400),
          plan: 'renew-serving',
        },
        {
          name: 'a serving certificate missing a wanted host is renewed',
          stored: present({ missingHosts: ['127.0.0.1'] }),
          now: at(1),
          plan: 'renew-serving',
        },
        {
          name: 'a serving certificate from another CA is renewed',
          stored: present({ servingSignedByAuthority: false }),
          now: at(1),
          plan: 'renew-serving',
        },
        {
          name: 'a serving key that does not match is renewed',
          stored: present({ servingKeyMatches: false }),
          now: at(1),
          plan: 'renew-serving',
        },
        {
          name: 'a CA due wins over a serving certificate due: one rotation, not two writes',
          stored: present({ serving: valid(2000, 2365) }),
          now: at(2500),
          plan: 'new-authority',
        },
      ],
    ),
  )('%s', (_name, row) => {
    expect(planCertificates(row.stored, row.now).action).toBe(row.plan);
  });

  it('says why, naming the expiry date or the missing hosts', () => {
    expect(planCertificates(present({ missingHosts: ['a.example', '10.0.0.1'] }), at(1))).toEqual({
      action: 'renew-serving',
      reason: 'the serving certificate does not cover a.example, 10.0.0.1',
    });
    expect(planCertificates(present({}), at(250))).toEqual({
      action: 'renew-serving',
      reason: `the serving certificate expires ${at(365).toISOString()}`,
    });
  });
});

describe('checkHashKey: a stored key is used as it is, or refused; never replaced', () => {
  it.each(
    named([
      { name: '32 bytes', key: Buffer.alloc(32, 1), problem: undefined },
      { name: '64 bytes', key: Buffer.alloc(64, 1), problem: undefined },
      {
        name: '31 bytes',
        key: Buffer.alloc(31, 1),
        problem: 'hash.key has 31 bytes; at least 32 are required',
      },
      { name: 'no key', key: undefined, problem: 'has no hash.key' },
    ]),
  )('%s', (_name, row) => {
    expect(checkHashKey(row.key, 32)).toBe(row.problem);
  });
});

describe('inspectCertificates on real PEMs', () => {
  const hosts = ['confighash', 'confighash.confighash-system.svc', '127.0.0.1'];
  const make = async () => {
    const ca = await generateCertificateAuthority('test CA', 10, T0);
    const serving = await generateServingCertificate(ca, hosts, 5, T0);
    return {
      ca,
      serving,
      data: {
        [CERT_KEYS.authorityCert]: Buffer.from(ca.cert),
        [CERT_KEYS.authorityKey]: Buffer.from(ca.key),
        [CERT_KEYS.servingCert]: Buffer.from(serving.cert),
        [CERT_KEYS.servingKey]: Buffer.from(serving.key),
        [CERT_KEYS.caBundle]: Buffer.from(ca.cert),
      } as Record<string, Buffer>,
    };
  };

  it('a consistent Secret: all facts hold, validity from the certificates', async () => {
    const { data } = await make();
    const stored = inspectCertificates(data, hosts);
    expect(stored.state).toBe('present');
    if (stored.state !== 'present') return;
    expect(stored.facts).toMatchObject({
      authorityKeyMatches: true,
      servingKeyMatches: true,
      servingSignedByAuthority: true,
      missingHosts: [],
    });
    // Second precision, one minute back-dated for clock skew.
    expect(stored.facts.serving.notAfter.getTime()).toBe(at(5).getTime());
    expect(stored.facts.serving.notBefore.getTime()).toBe(T0.getTime() - 60_000);
  });

  it('names the hosts the serving certificate lacks (DNS and IP)', async () => {
    const { data } = await make();
    const stored = inspectCertificates(data, [...hosts, 'other.example', '10.1.2.3']);
    expect(stored.state === 'present' && stored.facts.missingHosts).toEqual([
      'other.example',
      '10.1.2.3',
    ]);
  });

  it('notices swapped keys and a certificate from another CA', async () => {
    const first = await make();
    const second = await make();
    const mixed = {
      ...first.data,
      [CERT_KEYS.servingKey]: second.data[CERT_KEYS.servingKey]!,
      [CERT_KEYS.authorityKey]: second.data[CERT_KEYS.authorityKey]!,
    };
    const stored = inspectCertificates(mixed, hosts);
    expect(stored.state === 'present' && stored.facts).toMatchObject({
      authorityKeyMatches: false,
      servingKeyMatches: false,
      servingSignedByAuthority: true,
    });
    const foreign = { ...first.data, [CERT_KEYS.servingCert]: second.data[CERT_KEYS.servingCert]! };
    const other = inspectCertificates(foreign, hosts);
    expect(other.state === 'present' && other.facts.servingSignedByAuthority).toBe(false);
  });

  it.each(
    named<{ name: string; edit: Record<string, Buffer> | undefined; state: string }>([
      { name: 'absent', edit: undefined, state: 'absent' },
      { name: 'a key missing', edit: { [CERT_KEYS.caBundle]: Buffer.alloc(0) }, state: 'unusable' },
      {
        name: 'not PEM',
        edit: { [CERT_KEYS.servingCert]: Buffer.from('nope') },
        state: 'unusable',
      },
    ]),
  )('%s', async (_name, row) => {
    const { data } = await make();
    const stored = inspectCertificates(row.edit ? { ...data, ...row.edit } : undefined, hosts);
    expect(stored.state).toBe(row.state);
  });
});

describe('caBundleAfterRotation', () => {
  it('trusts the new CA and, while it is valid, the one it replaces', async () => {
    const previous = await generateCertificateAuthority('old', 10, T0);
    const next = await generateCertificateAuthority('new', 10, T0);
    const bundle = caBundleAfterRotation(next.cert, previous.cert, at(1));
    expect(bundle).toBe(`${next.cert.trim()}\n${previous.cert.trim()}\n`);
    expect(caBundleAfterRotation(next.cert, previous.cert, at(11))).toBe(`${next.cert.trim()}\n`);
    expect(caBundleAfterRotation(next.cert, undefined, at(1))).toBe(`${next.cert.trim()}\n`);
    expect(caBundleAfterRotation(next.cert, 'garbage', at(1))).toBe(`${next.cert.trim()}\n`);
  });
});
