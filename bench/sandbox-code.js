'use strict';
/** The bench reactor's code (bench/react-setups.js reactSetup), also run bare by bench/sandbox-floor.js. */
const REACT_CODE = 'module.exports = async function (req) { return { raw: req.args }; };';

/** Its formula's request parameters (reactSetup), which the react floor (bench/react-floor.js) applies too. */
const REACT_PARAMETERS = [{ name: 'card.number', type: 'string' }];

module.exports = { REACT_CODE, REACT_PARAMETERS };
