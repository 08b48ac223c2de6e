'use strict';
/** The names of the scenarios issue 39's figures read (bench/scenarios.js and bench/floor-scenarios.js run them). */
/** Concurrency of the floor comparisons, on both sides (the figures were taken at 16 connections). */
const FLOOR_CONNECTIONS = 16;

const CREATE_FLOOR = 'floor: node:http + INSERT token row and audit row (one statement)';
const REVEAL_FLOOR = 'floor: node:http + SELECT by key and INSERT audit row (one statement)';
const PROXY_FLOOR = 'floor: node:http + SELECT 2 rows and INSERT 2 audit rows (one statement) + HTTPS POST';
const LIST_FLOOR = 'floor: node:http + the list page statement, 20 AES-GCM opens, batched audit record';
const REACT_FLOOR =
  'react floor: node:http + token read and 2 audit rows (one statement), AES-GCM open, sandbox worker';
const NEST_CREATE = 'bare NestJS on Express: the create floor statement';
const NEST_REVEAL = 'bare NestJS on Express: the reveal floor statement';
const NEST_PROXY = 'bare NestJS on Express: the proxy floor statement + HTTPS POST';

/** Scenario names the figures read (bench/scenarios.js and bench/floor-scenarios.js define the scenarios). */
const NAMES = {
  HEALTH: 'GET /health',
  POST_TOKENS: 'POST /tokens (card)',
  POST_TOKENS_KEYED: 'POST /tokens (card, idempotency key)',
  FLOOR_CREATE: CREATE_FLOOR,
  NEST_CREATE,
  GET_TOKEN: 'GET /tokens/<id> (reveal)',
  FLOOR_REVEAL: REVEAL_FLOOR,
  NEST_REVEAL,
  GET_TOKEN_1: 'GET /tokens/<id> (reveal, 1 connection)',
  FLOOR_REVEAL_1: `${REVEAL_FLOOR} (1 connection)`,
  NEST_REVEAL_1: `${NEST_REVEAL} (1 connection)`,
  PROXY_N: `POST /proxy (3 expressions, ${FLOOR_CONNECTIONS} connections)`,
  FLOOR_PROXY: PROXY_FLOOR,
  NEST_PROXY,
  PROXY_1: 'POST /proxy (3 expressions, 1 connection)',
  FLOOR_PROXY_1: `${PROXY_FLOOR} (1 connection)`,
  DIRECT_1: 'direct HTTPS echo (1 connection)',
  LIST_BY_METADATA: 'GET /tokens?metadata.k=v',
  FLOOR_LIST: `${LIST_FLOOR} (GET /tokens?metadata.k=v)`,
  TOKENIZE_RUNS: [1, 2, 3].map((n) => `POST /tokenize (100 leaves, run ${n} of 3)`),
  REACT_16: 'POST /reactors/<id>/react (1 card, 16 connections)',
  REACT_1: 'POST /reactors/<id>/react (1 card, 1 connection)',
  FLOOR_REACT_16: `${REACT_FLOOR} (1 card, ${FLOOR_CONNECTIONS} connections)`,
  FLOOR_REACT_1: `${REACT_FLOOR} (1 card, 1 connection)`,
  /** Not a scenario: bench/sandbox-floor.js's measure, given to hotPaths as a row of its own. */
  SANDBOX_FLOOR: 'sandbox floor: bare isolated-vm, a fresh context + prelude + the bench reactor per run',
};

module.exports = { FLOOR_CONNECTIONS, NAMES };
