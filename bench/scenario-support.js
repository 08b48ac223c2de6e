'use strict';
// What several scenario files share: the run's tag, request headers, a bounded job pool, the reveal application.
const { randomBytes } = require('node:crypto');

/** A private application that may create and read tokens in every container and sees them revealed. */
async function revealApplication(ctx) {
  if (!ctx.cache.has('revealApplication')) {
    ctx.cache.set(
      'revealApplication',
      ctx.createApplication({
        name: 'bench reveal',
        type: 'private',
        permissions: ['token:create', 'token:read'],
        rules: [
          {
            description: 'everything, revealed',
            priority: 1,
            container: '/',
            transform: 'reveal',
            permissions: ['token:create', 'token:read'],
          },
        ],
      }),
    );
  }
  return ctx.cache.get('revealApplication');
}

/** Distinct per run and per process, so repeated runs on one database never collide either. */
const RUN = randomBytes(3).toString('hex');
function jsonHeaders(key) {
  return { 'bt-api-key': key, 'content-type': 'application/json' };
}

/** Runs `count` jobs, at most `concurrency` at a time, in order of index. */
async function runPool(count, concurrency, job) {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next;
      next += 1;
      await job(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

module.exports = { RUN, jsonHeaders, runPool, revealApplication };
