import { describe, test, expect, beforeAll, afterAll } from '@jest/globals';
import { defineConformanceTests } from '@polyhal/conformance';
import { ReferenceBackend } from '@polyhal/backend-reference';
import { REPO_BACKENDS } from '../support/backends.js';

// Every backend of the repo runs the whole suite against the float64 oracle.
for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  defineConformanceTests(name, factory, { describe, test, expect: expect as never, beforeAll, afterAll });
}

// The reference backend (backends/reference: BaseBackend's hook set only, float64 kernels written
// independently of the op table and the oracle) passes every case in the strict class it declares.
defineConformanceTests('reference', async () => new ReferenceBackend(), {
  describe,
  test,
  expect: expect as never,
  beforeAll,
  afterAll,
});
