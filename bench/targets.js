'use strict';
/** Targets that compare a row with another scenario of the same run (see `targets` in bench/scenarios.js). */

/** This row's req/s ÷ that of `reference`, at least `threshold`. */
function requestsPerSecondVs(reference, threshold) {
  return {
    label: `req/s vs ${reference} req/s`,
    measure: (row, byName) =>
      byName[reference] && byName[reference].requests_per_second > 0
        ? row.requests_per_second / byName[reference].requests_per_second
        : null,
    op: '>=',
    threshold,
  };
}

/** This row's p99 ÷ that of `reference`, at most `threshold` times. */
function p99Vs(reference, threshold) {
  return {
    label: `p99 vs ${reference} p99`,
    measure: (row, byName) =>
      byName[reference] && byName[reference].latency_p99_ms > 0
        ? row.latency_p99_ms / byName[reference].latency_p99_ms
        : null,
    op: '<=',
    threshold,
    unit: '×',
  };
}

module.exports = { p99Vs, requestsPerSecondVs };
