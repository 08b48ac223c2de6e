'use strict';
/** The bench reactor's code (bench/scenarios.js reactSetup), also run bare by bench/sandbox-floor.js. */
const REACT_CODE = 'module.exports = async function (req) { return { raw: req.args }; };';

module.exports = { REACT_CODE };
