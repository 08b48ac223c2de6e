/**
 * Part of the prelude (prelude.ts): `fetch`, `require('node-fetch')` and `require('axios')` for tenant code,
 * built inside the isolate on the host bridge's `call('fetch', ...)`. The host makes each request through
 * the outbound guard (FetchBridge); only JSON strings cross. Uses the prelude's captured `stringify`/`parse`.
 */
export const FETCH_SHIMS = String.raw`
  // fetch, node-fetch and axios over the host bridge: the host sends each call through the outbound guard.
  function makeFetch(call) {
    function lowerMap(init) {
      const map = Object.create(null);
      if (init && typeof init === 'object') {
        const pairs = Array.isArray(init) ? init : typeof init.forEach === 'function' && init instanceof Headers ? init.entries() : Object.entries(init);
        for (const [name, value] of pairs) map[String(name).toLowerCase()] = String(value);
      }
      return map;
    }
    class Headers {
      constructor(init) {
        this._map = lowerMap(init);
      }
      get(name) {
        const value = this._map[String(name).toLowerCase()];
        return value === undefined ? null : value;
      }
      has(name) {
        return this._map[String(name).toLowerCase()] !== undefined;
      }
      set(name, value) {
        this._map[String(name).toLowerCase()] = String(value);
      }
      append(name, value) {
        const key = String(name).toLowerCase();
        this._map[key] = this._map[key] === undefined ? String(value) : this._map[key] + ', ' + String(value);
      }
      delete(name) {
        delete this._map[String(name).toLowerCase()];
      }
      forEach(fn, thisArg) {
        for (const key of Object.keys(this._map)) fn.call(thisArg, this._map[key], key, this);
      }
      keys() {
        return Object.keys(this._map)[Symbol.iterator]();
      }
      values() {
        return Object.values(this._map)[Symbol.iterator]();
      }
      entries() {
        return Object.entries(this._map)[Symbol.iterator]();
      }
      [Symbol.iterator]() {
        return this.entries();
      }
    }
    async function fetch(url, init) {
      const options = init || {};
      const headers = lowerMap(options.headers);
      let body = options.body;
      if (body !== undefined && body !== null && typeof body !== 'string') {
        body = stringify(body);
        if (headers['content-type'] === undefined) headers['content-type'] = 'application/json';
      }
      const sent = { method: String(options.method || 'GET').toUpperCase(), headers: Object.assign({}, headers) };
      if (body !== undefined && body !== null) sent.body = body;
      const res = await call('fetch', [String(url), sent]);
      const text = res.body;
      return {
        ok: res.status >= 200 && res.status < 300,
        status: res.status,
        statusText: res.statusText,
        url: String(url),
        redirected: false,
        headers: new Headers(res.headers),
        text: async () => text,
        json: async () => parse(text),
      };
    }
    fetch.default = fetch;
    fetch.Headers = Headers;
    return fetch;
  }

  function makeAxios(fetch) {
    const hasHeader = (headers, name) => Object.keys(headers).some((k) => k.toLowerCase() === name);
    function create(defaults) {
      async function request(config) {
        const c = Object.assign({}, defaults, config, {
          headers: Object.assign({}, defaults.headers, config.headers),
        });
        let url = String(c.url || '');
        if (c.baseURL && !/^[a-z][a-z0-9+.-]*:/i.test(url)) {
          url = String(c.baseURL).replace(/\/+$/, '') + (url === '' ? '' : '/' + url.replace(/^\/+/, ''));
        }
        if (c.params && typeof c.params === 'object') {
          const query = Object.keys(c.params)
            .filter((k) => c.params[k] !== undefined && c.params[k] !== null)
            .map((k) => encodeURIComponent(k) + '=' + encodeURIComponent(String(c.params[k])))
            .join('&');
          if (query !== '') url += (url.includes('?') ? '&' : '?') + query;
        }
        const headers = Object.assign({}, c.headers);
        let body = c.data;
        if (body !== undefined && body !== null && typeof body !== 'string') {
          body = stringify(body);
          if (!hasHeader(headers, 'content-type')) headers['Content-Type'] = 'application/json';
        }
        if (!hasHeader(headers, 'accept')) headers.Accept = 'application/json, text/plain, */*';
        const res = await fetch(url, { method: String(c.method || 'get').toUpperCase(), headers, body });
        const text = await res.text();
        let data = text;
        try {
          data = text === '' ? '' : parse(text);
        } catch (e) {
          // not JSON: the text as it is
        }
        const responseHeaders = {};
        res.headers.forEach((value, name) => {
          responseHeaders[name] = value;
        });
        const response = { data, status: res.status, statusText: res.statusText, headers: responseHeaders, config: c };
        const valid = c.validateStatus === undefined ? (s) => s >= 200 && s < 300 : c.validateStatus;
        if (valid === null || valid(res.status)) return response;
        const error = new Error('Request failed with status code ' + res.status);
        error.name = 'AxiosError';
        error.isAxiosError = true;
        error.code = res.status >= 500 ? 'ERR_BAD_RESPONSE' : 'ERR_BAD_REQUEST';
        error.status = res.status;
        error.config = c;
        error.response = response;
        throw error;
      }
      const axios = (urlOrConfig, config) =>
        typeof urlOrConfig === 'string' ? request(Object.assign({}, config, { url: urlOrConfig })) : request(urlOrConfig || {});
      axios.request = (config) => request(config || {});
      for (const method of ['get', 'delete', 'head', 'options']) {
        axios[method] = (url, config) => request(Object.assign({}, config, { method, url }));
      }
      for (const method of ['post', 'put', 'patch']) {
        axios[method] = (url, data, config) => request(Object.assign({}, config, { method, url, data }));
      }
      axios.create = (more) =>
        create(Object.assign({}, defaults, more, { headers: Object.assign({}, defaults.headers, more && more.headers) }));
      axios.defaults = defaults;
      axios.isAxiosError = (e) => Boolean(e && e.isAxiosError);
      axios.default = axios;
      return axios;
    }
    return create({ headers: {} });
  }

`;
