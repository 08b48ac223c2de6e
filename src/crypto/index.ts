export * from './envelope';
export * from './keyed-hash';
export * from './keyring';
export * from './master-keys';
export * from './secrets';
