// Conformance tolerances follow the arithmetic a backend declares in `capabilities` (strict when it
// declares none), never its name: a backend whose exp is ~25 ulp off fails when it merely calls itself
// 'webgpu', and passes only when it declares the wgsl class. The report prints the class applied.
import { describe, expect, test } from '@jest/globals';
import {
  type BackendCapabilities,
  capabilitiesOf,
  type ComputeBackend,
  type NDArray,
  STRICT_CAPABILITIES,
  type UnaryOp,
} from '@polyhal/hal';
import { CpuBackend } from '@polyhal/backend-cpu';
import { htmlReport, runConformance, textTable, toleranceFor } from '@polyhal/conformance';
import { REPO_BACKENDS, requiredBackends } from '../support/backends.js';

/** The CPU backend with exp scaled by 1 + 2.5e-6 (21 to 42 ulp off), under any name and declared capabilities. */
function sloppyExp(name: string, capabilities?: Partial<BackendCapabilities>): () => CpuBackend {
  class SloppyExp extends CpuBackend {
    override unary(op: UnaryOp, x: NDArray): NDArray {
      const y = super.unary(op, x);
      if (op === 'exp') {
        const d = this.data(y.buffer);
        for (let i = 0; i < d.length; i++) d[i] = d[i]! * (1 + 2.5e-6);
      }
      return y;
    }
  }
  return () => {
    const be = new SloppyExp();
    Object.defineProperty(be, 'name', { value: name });
    Object.defineProperty(be, 'capabilities', { value: capabilities });
    return be;
  };
}

const EXP = { filter: /^exp\/float32\//, contract: false };

describe('tolerances follow declared capabilities, not names', () => {
  test("a backend named 'webgpu' that declares nothing is held to the strict class", async () => {
    const r = await runConformance(sloppyExp('webgpu'), EXP);
    expect(r.capabilities).toEqual(STRICT_CAPABILITIES);
    expect(r.capabilitiesDeclared).toBe(false);
    expect(r.failed).toBeGreaterThan(0);
    expect(textTable([r])).toContain(
      'tolerance class: ieee-correctly-rounded (default: the backend declares no capabilities)',
    );
  });

  test('the same backend under another name fails the same way', async () => {
    const r = await runConformance(sloppyExp('third-party'), EXP);
    expect(r.failed).toBeGreaterThan(0);
  });

  test('declaring the wgsl class applies the wgsl tolerances, whatever the name', async () => {
    const r = await runConformance(
      sloppyExp('third-party', { arithmetic: 'wgsl', fusedMultiplyAdd: true, flushesSubnormals: true }),
      EXP,
    );
    expect(r.results.filter((c) => !c.pass).map((c) => `${c.id}: ${c.message}`)).toEqual([]);
    expect(r.capabilitiesDeclared).toBe(true);
    expect(textTable([r])).toContain(
      'tolerance class: wgsl (declared by the backend; fused multiply-add, flushes subnormals)',
    );
    expect(htmlReport([r])).toContain('tolerance class: wgsl (declared by the backend');
    // the error is real: well past the strict exp tolerance, inside the wgsl one
    const worst = Math.max(...r.results.map((c) => c.maxRelError));
    expect(worst).toBeGreaterThan(toleranceFor('exp', 'float32', 'ieee-correctly-rounded').rel);
    expect(worst).toBeLessThan(toleranceFor('exp', 'float32', 'wgsl').rel);
  });

  test('an unknown arithmetic class is an error, never a looser table', async () => {
    await expect(runConformance(sloppyExp('x', { arithmetic: 'fast' as never }), EXP)).rejects.toThrow(
      /arithmetic 'fast'/,
    );
    expect(() => toleranceFor('exp', 'float32', 'webgpu' as never)).toThrow(/unknown arithmetic class 'webgpu'/);
  });

  test('partial declarations are completed with the strict defaults', () => {
    expect(capabilitiesOf({})).toEqual(STRICT_CAPABILITIES);
    expect(capabilitiesOf({ capabilities: { arithmetic: 'wgsl' } })).toEqual({
      arithmetic: 'wgsl',
      fusedMultiplyAdd: false,
      flushesSubnormals: false,
    });
  });

  test.each(Object.keys(REPO_BACKENDS))('%s declares its arithmetic', async (name) => {
    let be: ComputeBackend;
    try {
      be = await REPO_BACKENDS[name]!();
    } catch (e) {
      if (requiredBackends().includes(name)) throw e;
      return;
    }
    try {
      expect(be.capabilities).toBeDefined();
      expect(capabilitiesOf(be).arithmetic).toBe(name === 'webgpu' ? 'wgsl' : 'ieee-correctly-rounded');
      expect(capabilitiesOf(be).flushesSubnormals).toBe(name === 'webgpu');
    } finally {
      be.dispose();
    }
  });
});
