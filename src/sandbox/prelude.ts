import { FETCH_SHIMS } from './prelude-fetch';

/**
 * JavaScript evaluated inside every sandbox context before tenant code: the reactor SDK's error classes,
 * `require` over the allow-list, the `bt` client over the host bridge, and `__vault_start`, which the worker
 * calls once and which removes itself before any tenant code runs. Everything here runs inside the isolate;
 * the only host objects it ever holds are the bridge Reference (kept in a closure) and copied strings.
 */
export const SDK_MODULE = '@basis-theory/basis-theory-reactor-formulas-sdk-js';

export const PRELUDE = String.raw`
'use strict';
(function () {
  // Shared memory and timing primitives serve side channels, not reactors: gone from every context.
  for (const name of ['SharedArrayBuffer', 'Atomics', 'WebAssembly', 'FinalizationRegistry', 'WeakRef']) {
    delete globalThis[name];
  }
  // Captured before tenant code runs, which may replace the globals for its own context.
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const FALLBACK = 'Something went wrong. Please try again.';
  const MAX_MESSAGE = 1000;

  function text(value) {
    try {
      if (typeof value === 'string') return value;
      if (typeof value === 'object' && value !== null) return stringify(value);
      return String(value);
    } catch (e) {
      return FALLBACK;
    }
  }

  // Normalized as the published SDK does: a string or array goes under "error", object members become lists.
  function normalizeErrors(errors) {
    const out = {};
    if (Array.isArray(errors)) {
      out.error = errors.map(text);
    } else if (typeof errors === 'string') {
      out.error = [errors];
    } else if (typeof errors === 'object' && errors !== null) {
      for (const key of Object.keys(errors)) {
        const value = errors[key];
        out[key] = Array.isArray(value) ? value.map(text) : value ? [text(value)] : [FALLBACK];
      }
    } else if (errors !== undefined && errors !== null) {
      out.error = [text(errors)];
    } else {
      out.error = [FALLBACK];
    }
    return out;
  }

  class BasisTheoryReactorError extends Error {
    constructor({ message, status, errors }) {
      super(message);
      this.name = 'BasisTheoryReactorError';
      this.status = status;
      this.errors = normalizeErrors(errors);
    }
    toRFC7807() {
      return { detail: this.message, status: this.status, errors: this.errors };
    }
  }
  function reactorError(name, title, status) {
    const cls = class extends BasisTheoryReactorError {
      constructor(errors) {
        super({ message: title, status, errors });
        this.name = name;
      }
    };
    Object.defineProperty(cls, 'name', { value: name });
    return cls;
  }
  class CustomHttpResponseError extends Error {
    constructor({ status, headers, body } = {}) {
      super();
      this.name = 'CustomHttpResponseError';
      if (!Number.isInteger(status) || status < 200 || status > 599) {
        throw new Error('CustomHttpResponseError status must be an integer from 200 to 599.');
      }
      this.status = status;
      this.headers = headers === undefined || headers === null ? {} : headers;
      this.body = body === undefined || body === null ? {} : body;
    }
    toResponseBody() {
      return { status: this.status, headers: this.headers, body: this.body };
    }
  }
  const sdk = Object.freeze({
    BasisTheoryReactorError,
    AuthenticationError: reactorError('AuthenticationError', 'Authentication Failed', 401),
    AuthorizationError: reactorError('AuthorizationError', 'Forbidden', 403),
    BadRequestError: reactorError('BadRequestError', 'Bad Request', 400),
    InvalidPaymentMethodError: reactorError('InvalidPaymentMethodError', 'Invalid Payment Method', 402),
    InvalidReactorConfigurationError: reactorError(
      'InvalidReactorConfigurationError',
      'Invalid Reactor Configuration',
      400,
    ),
    RateLimitError: reactorError('RateLimitError', 'Rate Limit Exceeded', 429),
    ReactorRuntimeError: reactorError('ReactorRuntimeError', 'Reactor Runtime Error', 500),
    ServiceUnavailableError: reactorError('ServiceUnavailableError', 'Service Unavailable', 503),
    CustomHttpResponseError,
  });

  function describeThrown(thrown) {
    try {
      if (thrown instanceof CustomHttpResponseError) {
        return { kind: 'custom_response', status: thrown.status, headers: thrown.headers, body: thrown.body };
      }
      if (thrown instanceof BasisTheoryReactorError) {
        return { kind: 'sdk', name: String(thrown.name), errors: thrown.errors };
      }
      if (thrown instanceof BridgeError) {
        return { kind: 'error', message: thrown.message.slice(0, MAX_MESSAGE) };
      }
      const message =
        typeof thrown === 'object' && thrown !== null && typeof thrown.message === 'string'
          ? thrown.message
          : text(thrown);
      return { kind: 'error', message: String(message).slice(0, MAX_MESSAGE) };
    } catch (e) {
      return { kind: 'error', message: 'A value that cannot be described was thrown.' };
    }
  }

  class BridgeError extends Error {
    constructor(problem) {
      super(typeof problem.detail === 'string' ? problem.detail : 'The call failed.');
      this.name = 'BasisTheoryApiError';
      this.status = problem.status;
      this.data = problem;
    }
  }

  const toSnake = (key) => key.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
  const toCamel = (key) => key.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
  // Like the official SDK: envelope keys change case, the contents of data, metadata and mask do not.
  const OPAQUE = new Set(['data', 'metadata', 'mask']);
  function convertKeys(value, convert) {
    if (Array.isArray(value)) return value.map((v) => convertKeys(v, convert));
    if (typeof value !== 'object' || value === null) return value;
    const out = {};
    for (const key of Object.keys(value)) {
      const name = convert(key);
      out[name] = OPAQUE.has(name) || OPAQUE.has(key) ? value[key] : convertKeys(value[key], convert);
    }
    return out;
  }

  function makeBt(call) {
    const request = (v) => convertKeys(v, toSnake);
    const response = (v) => convertKeys(v, toCamel);
    return Object.freeze({
      tokens: Object.freeze({
        create: async (token) => response(await call('bt.tokens.create', [request(token)])),
        retrieve: async (id) => response(await call('bt.tokens.retrieve', [id])),
        update: async (id, patch) => response(await call('bt.tokens.update', [id, request(patch)])),
        delete: async (id) => {
          await call('bt.tokens.delete', [id]);
        },
        list: async (query) => response(await call('bt.tokens.list', [request(query || {})])),
      }),
      tokenize: async (body) => call('bt.tokenize', [body]),
    });
  }

${FETCH_SHIMS}
  globalThis.__vault_start = async function (userWrapper, host, input, names, ...moduleWrappers) {
    delete globalThis.__vault_start;
    const call = async (name, args) => {
      let json;
      try {
        json = stringify(args);
      } catch (e) {
        throw new TypeError('Arguments must be JSON values.');
      }
      let out;
      try {
        out = await host.apply(undefined, [name, json], {
          arguments: { copy: true },
          result: { promise: true, copy: true },
        });
      } catch (e) {
        let problem;
        try {
          problem = parse(String(e && e.message));
        } catch (parseError) {
          problem = { status: 500, detail: 'The call failed.' };
        }
        throw new BridgeError(problem);
      }
      return out === undefined || out === null ? null : parse(out);
    };
    const { req, bt, fetch: canFetch } = parse(input);
    const fetch = canFetch ? makeFetch(call) : undefined;
    const builtIns = fetch === undefined ? {} : { 'node-fetch': fetch, axios: makeAxios(fetch) };
    if (fetch !== undefined) globalThis.fetch = fetch;
    const exportsOf = new Map();
    function require(name) {
      if (name === ${JSON.stringify(SDK_MODULE)}) return sdk;
      if (Object.prototype.hasOwnProperty.call(builtIns, name)) return builtIns[name];
      const index = names.indexOf(name);
      if (index < 0) {
        const error = new Error("Cannot find module '" + String(name) + "'");
        error.code = 'MODULE_NOT_FOUND';
        throw error;
      }
      if (!exportsOf.has(name)) {
        const module = { exports: {} };
        exportsOf.set(name, module);
        moduleWrappers[index](module, module.exports, require);
      }
      return exportsOf.get(name).exports;
    }
    req.bt = bt ? makeBt(call) : null;
    try {
      const module = { exports: {} };
      userWrapper(module.exports, require, module);
      const handler = module.exports;
      if (typeof handler !== 'function') {
        return stringify({
          ok: false,
          error: { kind: 'error', message: 'The code must export a function: module.exports = async function (req) {...}' },
        });
      }
      const value = await handler(req);
      let json;
      try {
        json = stringify({ ok: true, value: value === undefined ? null : value });
      } catch (e) {
        return stringify({ ok: false, error: { kind: 'error', message: 'The code returned a value that is not JSON.' } });
      }
      return json;
    } catch (thrown) {
      return stringify({ ok: false, error: describeThrown(thrown) });
    }
  };
})();
`;
