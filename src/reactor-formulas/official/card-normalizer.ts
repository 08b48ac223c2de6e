/**
 * Official formula: turns a card as people type it (spaces, dashes, "MM/YY") into a clean card token in
 * the container the reactor is configured with. Needs a reactor application with token:create.
 */
export const CARD_NORMALIZER = {
  id: '7d1c3b1e-5a0f-4c55-9a43-0b8f4c1f0a02',
  name: 'Card Normalizer',
  description:
    'Cleans a card entered as free text (spaces, dashes, MM/YY or MM/YYYY expiry), checks it and stores it ' +
    'as a card token in the configured container. The reactor needs an application with token:create.',
  configuration: [
    { name: 'container', description: 'Container of the new card tokens, e.g. /pci/high/', type: 'string' },
  ],
  request_parameters: [
    { name: 'number', description: 'Card number as entered', type: 'string', optional: false },
    { name: 'expiration', description: 'MM/YY or MM/YYYY', type: 'string', optional: true },
    { name: 'cvc', description: 'Security code', type: 'string', optional: true },
  ],
  code: `const { BadRequestError, InvalidReactorConfigurationError } = require('@basis-theory/basis-theory-reactor-formulas-sdk-js');

module.exports = async function (req) {
  const container = req.configuration.container;
  if (!/^\\/([A-Za-z0-9_-]+\\/)+$/.test(container)) {
    throw new InvalidReactorConfigurationError({ container: ['must be a container path such as /pci/high/'] });
  }
  const number = req.args.number.replace(/[\\s-]/g, '');
  const errors = {};
  if (!/^\\d{13,19}$/.test(number)) errors.number = ['must be 13 to 19 digits'];
  const data = { number };
  if (req.args.expiration !== undefined) {
    const match = /^\\s*(\\d{1,2})\\s*\\/\\s*(\\d{2}|\\d{4})\\s*$/.exec(req.args.expiration);
    const month = match ? Number(match[1]) : 0;
    if (!match || month < 1 || month > 12) {
      errors.expiration = ['must be MM/YY or MM/YYYY'];
    } else {
      data.expiration_month = month;
      data.expiration_year = match[2].length === 2 ? 2000 + Number(match[2]) : Number(match[2]);
    }
  }
  if (req.args.cvc !== undefined) {
    if (!/^\\d{3,4}$/.test(req.args.cvc)) errors.cvc = ['must be 3 or 4 digits'];
    else data.cvc = req.args.cvc;
  }
  if (Object.keys(errors).length > 0) throw new BadRequestError(errors);
  return {
    raw: { last4: number.slice(-4) },
    tokenize: { card: { type: 'card', data, containers: [container] } },
  };
};
`,
};
