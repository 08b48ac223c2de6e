import type { Response } from 'supertest';
import { accessRule, applicationBody } from './application-factory';

/**
 * Hostile request bodies and the checks on what the service answers to them (test/common/errors.e2e-spec.ts),
 * and bodies made from openapi.json with null or deeply nested members (test/common/hostile-property.e2e-spec.ts).
 */

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

/** The parts of an OpenAPI schema the generated bodies read. */
export interface Schema {
  $ref?: string;
  allOf?: Schema[];
  type?: string;
  format?: string;
  enum?: unknown[];
  example?: unknown;
  minimum?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  nullable?: boolean;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>>;
  components: { schemas: Record<string, Schema> };
}

/** A path to a member inside a body: names and array indexes. */
export type MemberPath = (string | number)[];

/** The schema itself, `$ref` and single `allOf` resolved, keeping the outer `nullable`. */
export function resolved(doc: OpenApiDocument, schema: Schema): Schema {
  let current = schema;
  for (let hops = 0; hops < 8; hops++) {
    const ref = current.$ref ?? (current.allOf?.length === 1 ? current.allOf[0].$ref : undefined);
    if (ref === undefined) {
      break;
    }
    current = { ...doc.components.schemas[ref.split('/').pop() as string], nullable: schema.nullable };
  }
  return current;
}

/** A plausible valid value: the example, the first enum value, or a made-up value of the type (required members only). */
export function sampleOf(doc: OpenApiDocument, schema: Schema, depth = 0): unknown {
  const s = resolved(doc, schema);
  if (s.example !== undefined) {
    return structuredClone(s.example);
  }
  if (s.enum !== undefined) {
    return s.enum[0];
  }
  if (s.properties !== undefined) {
    const required = new Set(s.required ?? []);
    const entries = Object.entries(s.properties).filter(([name]) => required.has(name) && depth < 6);
    return Object.fromEntries(entries.map(([name, member]) => [name, sampleOf(doc, member, depth + 1)]));
  }
  if (s.type === 'array') {
    return s.items === undefined || depth >= 6 ? [] : [sampleOf(doc, s.items, depth + 1)];
  }
  if (s.type === 'object') {
    return {};
  }
  if (s.type === 'number' || s.type === 'integer') {
    return s.minimum ?? 1;
  }
  if (s.type === 'boolean') {
    return false;
  }
  return s.format === 'uuid' ? '00000000-0000-4000-8000-000000000000' : 'x';
}

/** Every member of a body schema, through nested objects and the first item of arrays, and whether it is optional. */
export function memberPaths(
  doc: OpenApiDocument,
  schema: Schema,
  at: MemberPath = [],
): [MemberPath, boolean][] {
  const s = resolved(doc, schema);
  if (at.length > 8) {
    return [];
  }
  if (s.type === 'array' && s.items !== undefined) {
    return memberPaths(doc, s.items, [...at, 0]);
  }
  const required = new Set(s.required ?? []);
  return Object.entries(s.properties ?? {}).flatMap(([name, member]): [MemberPath, boolean][] => [
    [[...at, name], !required.has(name)],
    ...memberPaths(doc, member, [...at, name]),
  ]);
}

/** The schema of the member at `path`. */
function memberSchema(doc: OpenApiDocument, schema: Schema, path: MemberPath): Schema {
  let s = resolved(doc, schema);
  for (const step of path) {
    s = resolved(doc, (typeof step === 'number' ? s.items : s.properties?.[step]) ?? {});
  }
  return s;
}

/** A sample body with the member at `path` set to `value`; missing parents are made as samples of their schema. */
export function bodyWith(
  doc: OpenApiDocument,
  schema: Schema,
  path: MemberPath,
  value: unknown,
  body: unknown = sampleOf(doc, schema),
): unknown {
  if (path.length === 0 || typeof body !== 'object' || body === null) {
    return value;
  }
  let parent = body as Record<string | number, unknown>;
  for (let i = 0; i < path.length - 1; i++) {
    const child = parent[path[i]];
    if (typeof child !== 'object' || child === null) {
      const made = sampleOf(doc, memberSchema(doc, schema, path.slice(0, i + 1)));
      parent[path[i]] =
        typeof made === 'object' && made !== null ? made : typeof path[i + 1] === 'number' ? [] : {};
    }
    parent = parent[path[i]] as Record<string | number, unknown>;
  }
  parent[path[path.length - 1]] = value;
  return body;
}

/** Stands for the deep member in the sample body until it is written out as text. */
const DEEP_MEMBER = '__deep_member_placeholder__';

/**
 * The JSON text of a sample body whose member at `path` (or the whole body, for `[]`) is `leaf` inside arrays or
 * objects nested `levels` deep. Written as text: JSON.stringify itself overflows the stack some thousands deep.
 */
export function deepBody(
  doc: OpenApiDocument,
  schema: Schema,
  path: MemberPath,
  kind: 'array' | 'object',
  levels: number,
  leaf: unknown,
): string {
  const [open, close] = kind === 'array' ? ['[', ']'] : ['{"a":', '}'];
  const deep = `${open.repeat(levels)}${JSON.stringify(leaf)}${close.repeat(levels)}`;
  return JSON.stringify(bodyWith(doc, schema, path, DEEP_MEMBER)).replace(`"${DEEP_MEMBER}"`, () => deep);
}

/** The request body schema of an operation, when it has one described by members. */
export function bodySchemaOf(doc: OpenApiDocument, path: string, method: string): Schema | undefined {
  const content = doc.paths[path]?.[method]?.requestBody?.content;
  return content === undefined ? undefined : Object.values(content)[0]?.schema;
}
