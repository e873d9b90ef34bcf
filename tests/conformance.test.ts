import { describe, test, expect, beforeAll, afterAll } from '@jest/globals';
import { defineConformanceTests } from '@polyhal/conformance';
import { REPO_BACKENDS } from './backends.js';

// Every backend of the repo runs the whole suite against the float64 oracle.
for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  defineConformanceTests(name, factory, { describe, test, expect: expect as never, beforeAll, afterAll });
}
