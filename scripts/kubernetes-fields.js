// Unknown field names in Kubernetes objects (a typo such as `readOnlyRootFileSystem` passes a JSON schema
// without additionalProperties: false, and the API server would drop or refuse it). The field names come
// from the same pinned kubernetes-models package: its TypeScript declarations of every API type, read with
// the TypeScript compiler.
'use strict';

const { dirname, join } = require('node:path');
const ts = require('typescript');

const MODELS = dirname(require.resolve('kubernetes-models/package.json'));

function declarationFile(apiVersion, kind) {
  return join(MODELS, apiVersion, `${kind}.d.ts`);
}

/** A checker over the declarations of the given objects' kinds, built once for all of them. */
function fieldChecker(objects) {
  const files = [...new Set(objects.map((o) => declarationFile(o.apiVersion, o.kind)))];
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();

  const rootType = (object) => {
    const source = program.getSourceFile(declarationFile(object.apiVersion, object.kind));
    const exported = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    const symbol = exported?.exports?.get(`I${object.kind}`);
    return symbol === undefined ? null : checker.getDeclaredTypeOfSymbol(symbol);
  };

  /** The object-like members of a type (`T | undefined` is T; a union of objects keeps each). */
  const shapes = (type) =>
    (type.isUnion() ? type.types : [type]).filter(
      (t) => (t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)) === 0,
    );

  const walk = (value, type, path, problems) => {
    const members = shapes(type);
    if (members.length === 0 || members.some((t) => t.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown))) {
      return;
    }
    if (Array.isArray(value)) {
      const array = members.find((t) => checker.isArrayType(t));
      if (array !== undefined) {
        const [element] = checker.getTypeArguments(array);
        value.forEach((item, i) => walk(item, element, `${path}/${i}`, problems));
      }
      return;
    }
    if (value === null || typeof value !== 'object') {
      return;
    }
    const objects = members.filter((t) => t.flags & ts.TypeFlags.Object && !checker.isArrayType(t));
    if (objects.length === 0) {
      return;
    }
    const index = objects.map((t) => checker.getIndexInfoOfType(t, ts.IndexKind.String)).find(Boolean);
    for (const [key, child] of Object.entries(value)) {
      const property = objects.map((t) => t.getProperty(key)).find(Boolean);
      if (property !== undefined) {
        const declaration = property.valueDeclaration ?? property.declarations?.[0];
        walk(child, checker.getTypeOfSymbolAtLocation(property, declaration), `${path}/${key}`, problems);
      } else if (index !== undefined) {
        walk(child, index.type, `${path}/${key}`, problems);
      } else {
        problems.push(`${path}/${key} is not a field of this object`);
      }
    }
  };

  /** The unknown fields of one object, as JSON pointers; null when its kind has no declaration. */
  return (object) => {
    const type = rootType(object);
    if (type === null) {
      return null;
    }
    const problems = [];
    walk(object, type, '', problems);
    return problems;
  };
}

module.exports = { fieldChecker };
