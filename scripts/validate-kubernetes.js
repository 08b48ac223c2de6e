#!/usr/bin/env node
// Validates rendered Kubernetes manifests (multi-document YAML, as `kubectl kustomize` prints them) against
// the Kubernetes API schemas shipped in the pinned kubernetes-models package (JSON schemas generated from the
// Kubernetes OpenAPI document, compiled with ajv), and refuses field names the API does not have
// (kubernetes-fields.js). Every object must be of a known apiVersion and kind.
//   node scripts/validate-kubernetes.js <file.yaml>...   exit 1 when any object is invalid
//   node scripts/validate-kubernetes.js --self-test      exit 1 unless known-bad objects are refused
'use strict';

const { readFileSync } = require('node:fs');
const YAML = require('yaml');
const { fieldChecker } = require('./kubernetes-fields');

/** kubernetes-models' module of an apiVersion: `v1` (the core group), `apps/v1`, `networking.k8s.io/v1`. */
async function modelOf(apiVersion, kind) {
  if (typeof apiVersion !== 'string' || !/^([a-z0-9.-]+\/)?v\d+((alpha|beta)\d+)?$/.test(apiVersion)) {
    return null;
  }
  try {
    const module = await import(`kubernetes-models/${apiVersion}`);
    return typeof module[kind] === 'function' ? module[kind] : null;
  } catch {
    return null;
  }
}

/** The problems of one object, as `<kind>/<name>: <path> <message>` lines; none when it is valid. */
async function problemsOf(object) {
  if (object === null || typeof object !== 'object' || Array.isArray(object)) {
    return ['a document that is not an object'];
  }
  const label = `${object.kind ?? '?'}/${object.metadata?.name ?? '?'}`;
  const Model = await modelOf(object.apiVersion, object.kind);
  if (Model === null) {
    return [`${label}: no schema for apiVersion ${object.apiVersion} kind ${object.kind}`];
  }
  try {
    new Model(object).validate();
    return [];
  } catch (err) {
    const errors = Array.isArray(err.errors) ? err.errors : [{ instancePath: '', message: err.message }];
    return errors.map((e) => `${label}: ${e.instancePath || '/'} ${e.message}`);
  }
}

/** Every document of a multi-document YAML text; a YAML error is a problem too. */
function documentsOf(text, file) {
  return YAML.parseAllDocuments(text).map((doc) => {
    if (doc.errors.length > 0) {
      throw new Error(`${file}: ${doc.errors[0].message}`);
    }
    return doc.toJS();
  });
}

/** Schema problems, then unknown fields of the objects the schema knows; `where` names each object's file. */
async function problemsOfAll(objects, where) {
  const problems = [];
  const known = [];
  for (const [i, object] of objects.entries()) {
    const found = await problemsOf(object);
    problems.push(...found.map((p) => `${where(i)}${p}`));
    if (found.length === 0) {
      known.push([i, object]);
    }
  }
  const unknownFields = fieldChecker(known.map(([, object]) => object));
  for (const [i, object] of known) {
    const label = `${object.kind}/${object.metadata?.name ?? '?'}`;
    const found = unknownFields(object) ?? [`no field declarations for ${object.apiVersion} ${object.kind}`];
    problems.push(...found.map((p) => `${where(i)}${label}: ${p}`));
  }
  return problems;
}

async function validateFiles(files) {
  const objects = [];
  const fileOf = [];
  for (const file of files) {
    for (const object of documentsOf(readFileSync(file, 'utf8'), file)) {
      if (object !== null) {
        objects.push(object);
        fileOf.push(file);
      }
    }
  }
  return { objects: objects.length, problems: await problemsOfAll(objects, (i) => `${fileOf[i]}: `) };
}

/** Objects that must be refused: a check that passes them validates nothing. */
const KNOWN_BAD = [
  {
    why: 'replicas as a string, a container without a name',
    object: {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'bad' },
      spec: {
        replicas: 'two',
        selector: { matchLabels: { app: 'bad' } },
        template: { spec: { containers: [{ image: 'token-vault' }] } },
      },
    },
  },
  {
    why: 'a probe port that is neither a number nor a name',
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'bad' },
      spec: {
        containers: [{ name: 'c', image: 'i', livenessProbe: { httpGet: { path: '/', port: [3000] } } }],
      },
    },
  },
  {
    why: 'an unknown kind',
    object: { apiVersion: 'apps/v1', kind: 'Deploymnet', metadata: { name: 'bad' } },
  },
  {
    why: 'a misspelt field (readOnlyRootFileSystem)',
    object: {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'bad' },
      spec: {
        selector: { matchLabels: { app: 'bad' } },
        template: {
          metadata: { labels: { app: 'bad' } },
          spec: {
            containers: [{ name: 'c', image: 'i', securityContext: { readOnlyRootFileSystem: true } }],
          },
        },
      },
    },
  },
];

async function selfTest() {
  let failed = 0;
  for (const { why, object } of KNOWN_BAD) {
    const problems = await problemsOfAll([object], () => '');
    if (problems.length === 0) {
      console.error(`self-test: accepted a bad object (${why})`);
      failed += 1;
    } else {
      console.log(`self-test: refused (${why}): ${problems[0]}`);
    }
  }
  return failed === 0;
}

async function main(args) {
  if (args[0] === '--self-test') {
    return (await selfTest()) ? 0 : 1;
  }
  if (args.length === 0) {
    console.error('Usage: node scripts/validate-kubernetes.js <rendered.yaml>... | --self-test');
    return 2;
  }
  const { objects, problems } = await validateFiles(args);
  for (const problem of problems) {
    console.error(problem);
  }
  if (objects === 0) {
    console.error('No objects to validate.');
    return 1;
  }
  console.log(`${objects} objects checked, ${problems.length} problem(s).`);
  return problems.length === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  },
);
