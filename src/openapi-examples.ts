import { CARD_INSIGHTS } from './reactor-formulas/official/card-insights';

/**
 * The request examples /docs offers for "Try it out", by the DTO of the body and the method that sends it
 * (create and replace share a DTO but not their examples). Each succeeds as shown (path ids aside, which
 * the user fills in); test/docs/openapi-examples.e2e-spec.ts sends every one to a running vault and
 * expects the documented success status. Card numbers are the networks' public test numbers.
 */
export interface OperationExample {
  summary: string;
  value: unknown;
}

export type Examples = Record<string, OperationExample>;
export type BodyMethod = 'post' | 'put' | 'patch';
export type RequestExamples = Record<string, Partial<Record<BodyMethod, Examples>>>;

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

export const REQUEST_EXAMPLES: RequestExamples = {
  CreateApplicationDto: {
    post: {
      private: {
        summary: 'A private application for a backend',
        value: { name: 'Checkout backend', type: 'private', permissions: FULL_TOKEN_PERMISSIONS },
      },
      public: {
        summary: 'A public application for a browser',
        value: { name: 'Checkout page', type: 'public', permissions: ['token:create'] },
      },
    },
  },
  UpdateApplicationDto: {
    put: {
      rules: {
        summary:
          "Cards in clear, everything else masked (use the private application's id: a public one cannot read)",
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
  },
  CreateTokenDto: {
    post: {
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
  },
  SearchTokensDto: {
    post: {
      metadata: {
        summary: 'By metadata',
        value: { query: 'metadata.customer_id:cus_8f2a', page: 1, size: 20 },
      },
    },
  },
  UpdateTokenDto: {
    patch: {
      metadata: {
        summary: 'Change metadata (JSON merge patch)',
        value: { metadata: { customer_id: 'cus_91bc' } },
      },
    },
  },
  CreateInvitationDto: {
    post: { colleague: { summary: 'Invite a colleague', value: { email: 'colleague@example.com' } } },
  },
  ReactorFormulaBodyDto: {
    post: { formula: { summary: 'A private formula', value: FORMULA } },
    put: { formula: { summary: 'The formula, renamed', value: { ...FORMULA, name: 'Card last four' } } },
  },
  ReactorBodyDto: {
    post: {
      code: {
        summary: 'A code reactor',
        value: {
          name: 'Charge',
          code: 'module.exports = async function (req) {\n  return { raw: { amount: req.args.amount } };\n};',
          configuration: { currency: 'USD' },
          runtime: { image: 'node-bt', timeout: 5 },
        },
      },
      insights: {
        summary: 'A reactor of the official Card Insights formula',
        value: { name: 'Card insights', configuration: {}, formula: { id: CARD_INSIGHTS.id } },
      },
    },
    put: { rename: { summary: 'Rename', value: { name: 'Card insights (checkout)', configuration: {} } } },
  },
  PatchReactorDto: {
    patch: {
      rename: { summary: 'Rename (JSON merge patch)', value: { name: 'Card insights (renamed)' } },
    },
  },
  ReactRequestDto: {
    post: {
      literal: {
        summary: 'Card Insights on a card given in clear (use "{{ <card token id> }}" for a token)',
        value: {
          args: { card: { number: '4242424242424242', expiration_month: 12, expiration_year: 2030 } },
        },
      },
    },
  },
  PatchProxyDto: {
    patch: {
      open: {
        summary: 'Callable with the proxy key alone (JSON merge patch)',
        value: { require_auth: false },
      },
    },
  },
  ProxyBodyDto: {
    post: {
      processor: {
        summary: 'A payment processor, callers authenticated',
        value: { name: 'Acme Payments', destination_url: 'https://api.example.com/v1', require_auth: true },
      },
      transform: { summary: 'With a request transform and its configuration', value: PROXY_WITH_TRANSFORM },
    },
    put: {
      open: {
        summary: 'Callable with the proxy key alone',
        value: { name: 'Acme Payments', destination_url: 'https://api.example.com/v1', require_auth: false },
      },
    },
  },
};
