/** Tests run on the TypeScript sources (workspace packages mapped to src/); `tsc -b` type-checks separately. */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  setupFiles: ['<rootDir>/tests/support/setup.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^@polyhal/hal$': '<rootDir>/hal/src/index.ts',
    '^@polyhal/hal/internal$': '<rootDir>/hal/src/internal.ts',
    '^@polyhal/backend-cpu$': '<rootDir>/backends/cpu/src/index.ts',
    '^@polyhal/backend-wasm$': '<rootDir>/backends/wasm/src/index.ts',
    '^@polyhal/backend-webgpu$': '<rootDir>/backends/webgpu/src/index.ts',
    '^@polyhal/backend-reference$': '<rootDir>/backends/reference/src/index.ts',
    '^@polyhal/onnx$': '<rootDir>/packages/onnx/src/index.ts',
    '^@polyhal/conformance$': '<rootDir>/packages/conformance/src/index.ts',
    '^@polyhal/autograd$': '<rootDir>/packages/autograd/src/index.ts',
    '^@polyhal/models$': '<rootDir>/packages/models/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: { '^.+\\.tsx?$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tests/tsconfig.json' }] },
  testTimeout: 60000,
};
