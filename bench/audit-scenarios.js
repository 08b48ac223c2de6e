'use strict';
/**
 * Issue 15's figure, what auditing costs: POST /tokens (card) and GET /tokens/<id> (reveal) on the vault and on
 * a second vault with AUDIT_ENABLED=false ('no-audit'), AUDIT_ROUNDS times, alternating. One pair of 10 s runs
 * swings by ±5 % (vacuum, checkpoints, the machine's other work), more than the margin the target leaves; the
 * target is the median of the rounds' ratios, each taken between neighbouring runs. Every round's row is
 * printed, so the spread is visible.
 *
 * auditScenarios({ postTokens, getToken }) takes the vault rows to repeat; returns the scenarios in run order.
 */
const { median } = require('./hot-paths');

const AUDIT_ROUNDS = 3;
/** Auditing may cost these two hot routes at most 15 % of their throughput. */
const AUDIT_COST_LIMIT = 0.85;

/** The median, over rounds, of the audited row's req/s ÷ the unaudited one's, at least `threshold`. */
function medianRatioOfRounds(pairs, threshold) {
  return {
    label: `median of ${pairs.length} rounds' req/s vs auditing off`,
    measure: (row, byName) => {
      const ratios = pairs
        .filter(([on, off]) => byName[on] && byName[off] && byName[off].requests_per_second > 0)
        .map(([on, off]) => byName[on].requests_per_second / byName[off].requests_per_second);
      return ratios.length === pairs.length ? median(ratios) : null;
    },
    op: '>=',
    threshold,
  };
}

function rounds(base) {
  const scenarios = [];
  const pairs = [];
  for (let round = 1; round <= AUDIT_ROUNDS; round++) {
    const on = `${base.name} (audited, round ${round} of ${AUDIT_ROUNDS})`;
    const off = `${base.name} (auditing off, round ${round} of ${AUDIT_ROUNDS})`;
    pairs.push([on, off]);
    scenarios.push(
      { ...base, name: on, group: 'audit', targets: [] },
      { ...base, name: off, group: 'audit', server: 'no-audit', targets: [] },
    );
  }
  scenarios[scenarios.length - 2].targets = [medianRatioOfRounds(pairs, AUDIT_COST_LIMIT)];
  return scenarios;
}

function auditScenarios({ postTokens, getToken }) {
  return [...rounds(postTokens), ...rounds(getToken)];
}

module.exports = { auditScenarios };
