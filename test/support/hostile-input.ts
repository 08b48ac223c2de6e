import type { Response } from 'supertest';
import { accessRule, applicationBody } from './application-factory';

/** Hostile request bodies and the checks on what the service answers to them (used by test/common/errors.e2e-spec.ts). */

/** Values of the wrong JSON type (or shape, or size) for any field. */
function wrongValues(): [string, unknown][] {
  let deep: unknown = 'bottom';
  for (let i = 0; i < 2000; i++) {
    deep = { nested: [deep] };
  }
  return [
    ['zero', 0],
    ['a negative float', -1.5],
    ['a huge number', 1e308],
    ['true', true],
    ['null', null],
    ['an empty array', []],
    ['an array of nulls', [null, null]],
    ['nested arrays', [[[]]]],
    ['an empty object', {}],
    ['an object', { a: { b: 1 } }],
    ['a huge string', 'x'.repeat(200_000)],
    ['a NUL character', 'a\u0000b'],
    ['deeply nested garbage', deep],
  ];
}

/** Raw bodies: each a hostile JSON document (written as text: a `__proto__` literal would not survive JSON.stringify). */
function rawBodies(secret: string): [string, string][] {
  const valid = JSON.stringify(applicationBody()).slice(1, -1);
  return [
    ['null', 'null'],
    ['an empty array', '[]'],
    ['an array of bodies', `[${JSON.stringify(applicationBody())}]`],
    ['a number', '42'],
    ['a string', JSON.stringify(secret)],
    ['an empty object', '{}'],
    ['__proto__ pollution', `{${valid},"__proto__":{"polluted":"yes","type":"management"}}`],
    ['constructor.prototype pollution', `{${valid},"constructor":{"prototype":{"polluted":"yes"}}}`],
    ['__proto__ inside a rule', `{${valid},"rules":[{"__proto__":{"polluted":"yes"},"priority":1}]}`],
    ['__proto__ as the only member', '{"__proto__":{"polluted":"yes"}}'],
    ['duplicate members', `{${valid},"type":"management","type":"private"}`],
    ['a secret in an unknown member', `{${valid},"password":${JSON.stringify(secret)}}`],
    ['a secret as the type', JSON.stringify(applicationBody({ type: secret }))],
    ['a secret as a permission', JSON.stringify(applicationBody({ permissions: [secret] }))],
    [
      'a secret in a rule',
      JSON.stringify(applicationBody({ rules: [accessRule({ container: secret, transform: secret })] })),
    ],
    ['a secret as a nested name', JSON.stringify(applicationBody({ name: { value: secret } }))],
  ];
}

/** Every hostile body for POST and PUT: wrong values for each field and each rule field, plus the raw documents. */
export function hostileBodies(secret: string): [string, string][] {
  const bodies: [string, string][] = [];
  for (const [label, value] of wrongValues()) {
    for (const field of ['name', 'type', 'permissions', 'rules']) {
      bodies.push([`${field} = ${label}`, JSON.stringify(applicationBody({ [field]: value }))]);
    }
    for (const field of ['description', 'priority', 'container', 'transform', 'permissions']) {
      bodies.push([
        `rules[0].${field} = ${label}`,
        JSON.stringify(applicationBody({ rules: [accessRule({ [field]: value })] })),
      ]);
    }
    bodies.push([`permissions[0] = ${label}`, JSON.stringify(applicationBody({ permissions: [value] }))]);
  }
  return [...bodies, ...rawBodies(secret)];
}

/** A stack frame (`at fn (file:line)`), a source path or a module path: internals that must never reach a caller. */
export const STACK_TRACE = /\bat [\w$.<>[\] ]+ \(|\bat (?:async )?\/|\.[jt]s:\d+|node_modules/;

/** What is wrong with the answer to a hostile request; empty when it is a clean 2xx or 4xx problem. */
function faultsOf(res: Response, secret: string): string[] {
  const faults: string[] = [];
  if (res.status >= 500) {
    faults.push(`status ${res.status}`);
  }
  if (STACK_TRACE.test(res.text)) {
    faults.push('stack trace');
  }
  if (res.text.includes(secret)) {
    faults.push('echoes the secret');
  }
  if (
    res.status >= 400 &&
    (!/^application\/problem\+json/.test(res.headers['content-type'] ?? '') || res.body.status !== res.status)
  ) {
    faults.push('not a problem-details body');
  }
  return faults;
}

/** Sends each request and collects every faulty answer, so one run shows all of them. */
export async function hostileRun(
  secret: string,
  requests: [string, () => Promise<Response>][],
): Promise<string[]> {
  const offenders: string[] = [];
  for (const [label, send] of requests) {
    const res = await send();
    const faults = faultsOf(res, secret);
    if (faults.length > 0) {
      offenders.push(`${label}: ${faults.join(', ')}`);
    }
  }
  return offenders;
}
