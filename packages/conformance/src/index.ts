export * from './cases.js';
export * from './compare.js';
export * from './contract.js';
export * from './jest.js';
export * from './oracle.js';
export * from './random.js';
export * from './runner.js';
export * from './tolerances.js';
