import { ApiError, FieldErrors } from '../common/api-error';
import { compileErrorOf } from '../sandbox/compile-check';
import { checkStringMap, SANDBOX_MODULES } from '../sandbox/sandbox-configuration';
import { DEFAULT_RUNTIME_IMAGE, RUNTIME_IMAGES } from './dto/reactor-runtime.dto';

/** A code reactor's runtime as stored (jsonb) and shown. */
export interface ReactorRuntime {
  image: string;
  dependencies: Record<string, string>;
  /** Seconds; null: the sandbox limit. */
  timeout: number | null;
}

export interface CheckedCodeReactor {
  code: string;
  configuration: Record<string, string>;
  runtime: ReactorRuntime;
}

export interface CodeReactorBody {
  code?: unknown;
  configuration?: Record<string, unknown> | null;
  runtime?: unknown;
}

const RUNTIME_FIELDS = new Set(['image', 'dependencies', 'timeout']);

/**
 * The rules of a code reactor body the DTO cannot state: configuration is a flat map of strings, the
 * runtime names a known image, modules the sandbox provides and a timeout within the sandbox limit, and
 * the code compiles (422, like formula code). Nothing of a value is quoted back.
 */
export function checkCodeReactor(body: CodeReactorBody, maxTimeoutSeconds: number): CheckedCodeReactor {
  const errors: FieldErrors = {};
  if (typeof body.code !== 'string' || body.code.length === 0) {
    errors.code = ['is required'];
  }
  const configuration = checkStringMap(body.configuration ?? {}, errors) ?? {};
  const runtime = checkRuntime(body.runtime ?? null, maxTimeoutSeconds, errors);
  if (Object.keys(errors).length > 0) {
    throw ApiError.validation(errors);
  }
  const code = body.code as string;
  const compileError = compileErrorOf(code);
  if (compileError !== null) {
    throw ApiError.unprocessable('The code does not compile.', {
      code: [`${compileError.message} (line ${compileError.line}, column ${compileError.column})`],
    });
  }
  return { code, configuration, runtime };
}

function checkRuntime(value: unknown, maxTimeoutSeconds: number, errors: FieldErrors): ReactorRuntime {
  const runtime: ReactorRuntime = { image: DEFAULT_RUNTIME_IMAGE, dependencies: {}, timeout: null };
  if (value === null) {
    return runtime;
  }
  if (!isObject(value)) {
    errors.runtime = ['must be an object'];
    return runtime;
  }
  for (const name of Object.keys(value)) {
    if (!RUNTIME_FIELDS.has(name)) {
      errors[`runtime.${printable(name)}`] = [
        'is not allowed: the sandbox has a fixed size and no warm instances',
      ];
    }
  }
  const { image, dependencies, timeout } = value;
  if (image !== undefined && image !== null) {
    if (typeof image === 'string' && (RUNTIME_IMAGES as readonly string[]).includes(image)) {
      runtime.image = image;
    } else {
      errors['runtime.image'] = [`must be one of: ${RUNTIME_IMAGES.join(', ')}`];
    }
  }
  if (dependencies !== undefined && dependencies !== null) {
    runtime.dependencies = checkDependencies(dependencies, errors);
  }
  if (timeout !== undefined && timeout !== null) {
    if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1) {
      errors['runtime.timeout'] = ['must be a whole number of seconds, at least 1'];
    } else if (timeout > maxTimeoutSeconds) {
      errors['runtime.timeout'] = [`must be at most ${maxTimeoutSeconds} seconds (the sandbox limit)`];
    } else {
      runtime.timeout = timeout;
    }
  }
  return runtime;
}

function checkDependencies(value: unknown, errors: FieldErrors): Record<string, string> {
  if (!isObject(value)) {
    errors['runtime.dependencies'] = ['must be an object of module names and versions'];
    return {};
  }
  const checked: Record<string, string> = {};
  const unknown: string[] = [];
  for (const [name, version] of Object.entries(value)) {
    if (!SANDBOX_MODULES.includes(name)) {
      unknown.push(name);
    } else if (typeof version !== 'string' || version.length === 0 || version.length > 100) {
      errors[`runtime.dependencies.${name}`] = ['must be a version string'];
    } else {
      checked[name] = version;
    }
  }
  if (unknown.length > 0) {
    errors['runtime.dependencies'] = [
      `may name only modules the sandbox provides (no npm package is installed): ${SANDBOX_MODULES.join(', ')}`,
    ];
  }
  return checked;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function printable(name: string): string {
  const shown = name.replace(/[^\x20-\x7e]/g, '?');
  return shown.length > 64 ? `${shown.slice(0, 64)}…` : shown;
}
