import { CARD_INSIGHTS } from './reactor-formulas/official/card-insights';

/**
 * The request examples /docs offers for "Try it out", by operation. Each succeeds as shown (path ids
 * aside, which the user fills in); test/docs/openapi-examples.e2e-spec.ts sends every one to a running
 * vault and expects the documented success status. Card numbers are the networks' public test numbers.
 */
export interface OperationExample {
  summary: string;
  value: unknown;
}

const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2030, cvc: '123' };
const FULL_TOKEN_PERMISSIONS = ['token:create', 'token:read', 'token:update', 'token:search', 'token:use'];
const FORMULA = {
  name: 'Last four',
  description: 'Returns the last four digits of a card and the configured currency.',
  type: 'private',
  code: 'module.exports = async function (req) {\n  return { raw: { last4: req.args.card.number.slice(-4), currency: req.configuration.currency } };\n};',
  configuration: [{ name: 'currency', description: 'ISO 4217 code', type: 'string' }],
  request_parameters: [{ name: 'card.number', description: 'Card number', type: 'string' }],
};

const PROXY_WITH_TRANSFORM = {
  name: 'Acme Payments (USD)',
  destination_url: 'https://api.example.com/v1',
  request_transform: {
    code: 'module.exports = async function (req) {\n  return { body: { ...req.args.body, currency: req.configuration.currency }, headers: req.args.headers };\n};',
  },
  configuration: { currency: 'USD' },
};

export const OPERATION_EXAMPLES: Record<string, Record<string, OperationExample>> = {
  'POST /applications': {
    private: {
      summary: 'A private application for a backend',
      value: { name: 'Checkout backend', type: 'private', permissions: FULL_TOKEN_PERMISSIONS },
    },
    public: {
      summary: 'A public application for a browser',
      value: { name: 'Checkout page', type: 'public', permissions: ['token:create'] },
    },
  },
  'PUT /applications/{id}': {
    rules: {
      summary: 'Cards in clear, everything else masked',
      value: {
        name: 'Checkout backend',
        permissions: FULL_TOKEN_PERMISSIONS,
        rules: [
          {
            description: 'cards in clear',
            priority: 1,
            container: '/pci/',
            transform: 'reveal',
            permissions: FULL_TOKEN_PERMISSIONS,
          },
          {
            description: 'everything else masked',
            priority: 2,
            container: '/',
            transform: 'mask',
            permissions: FULL_TOKEN_PERMISSIONS,
          },
        ],
      },
    },
  },
  'POST /tokens': {
    card: {
      summary: 'A card',
      value: {
        type: 'card',
        data: CARD,
        metadata: { customer_id: 'cus_8f2a' },
        search_indexes: ['{{ data.number | last4 }}'],
      },
    },
    bank: {
      summary: 'A bank account',
      value: { type: 'bank', data: { routing_number: '021000021', account_number: '000123456789' } },
    },
    json: {
      summary: 'Any JSON, with an expiry',
      value: {
        type: 'token',
        data: { ssn: '123-45-6789', date_of_birth: '1990-05-17' },
        containers: ['/pii/high/'],
        metadata: { kind: 'identity' },
        expires_at: '2035-01-01T00:00:00Z',
      },
    },
  },
  'POST /tokens/search': {
    metadata: {
      summary: 'By metadata',
      value: { query: 'metadata.customer_id:cus_8f2a', page: 1, size: 20 },
    },
  },
  'PATCH /tokens/{id}': {
    metadata: {
      summary: 'Change metadata (JSON merge patch)',
      value: { metadata: { customer_id: 'cus_91bc' } },
    },
  },
  'POST /tokenize': {
    document: {
      summary: 'A nested document: leaves become token ids, definitions tokens',
      value: {
        customer: { name: 'Jane Doe', email: 'jane@example.com' },
        card: { type: 'card', data: CARD },
        bank: { type: 'bank', data: { routing_number: '021000021', account_number: '000123456789' } },
      },
    },
  },
  'POST /tenants/self/invitations': {
    colleague: { summary: 'Invite a colleague', value: { email: 'colleague@example.com' } },
  },
  'POST /reactor-formulas': { formula: { summary: 'A private formula', value: FORMULA } },
  'PUT /reactor-formulas/{id}': {
    formula: { summary: 'The formula, renamed', value: { ...FORMULA, name: 'Card last four' } },
  },
  'POST /reactors': {
    insights: {
      summary: 'A reactor of the official Card Insights formula',
      value: { name: 'Card insights', configuration: {}, formula: { id: CARD_INSIGHTS.id } },
    },
  },
  'PUT /reactors/{id}': {
    rename: { summary: 'Rename', value: { name: 'Card insights (checkout)', configuration: {} } },
  },
  'POST /proxies': {
    processor: {
      summary: 'A payment processor, callers authenticated',
      value: { name: 'Acme Payments', destination_url: 'https://api.example.com/v1', require_auth: true },
    },
    transform: { summary: 'With a request transform and its configuration', value: PROXY_WITH_TRANSFORM },
  },
  'PUT /proxies/{id}': {
    open: {
      summary: 'Callable with the proxy key alone',
      value: { name: 'Acme Payments', destination_url: 'https://api.example.com/v1', require_auth: false },
    },
  },
  'POST /reactors/{id}/react': {
    literal: {
      summary: 'Card Insights on a card given in clear (use "{{ <card token id> }}" for a token)',
      value: { args: { card: { number: '4242424242424242', expiration_month: 12, expiration_year: 2030 } } },
    },
  },
};
