// Integer GEMM C = A·B on int32 storage, exact modulo 2^32 (i32x4.mul and add wrap), with strided A
// (sam, sak) and B (sbk, sbn), strides in elements, C contiguous [M, N]. Row by row: one A element
// splatted against a row of B (four columns per i32x4 where B's rows are contiguous), added into C's row,
// which stays in cache for a row of B up to a few thousand columns.

export function gemmI32(
  a: usize, sam: i32, sak: i32, b: usize, sbk: i32, sbn: i32, c: usize, M: i32, K: i32, N: i32,
): void {
  memory.fill(c, 0, <usize>M * <usize>N * 4);
  for (let i = 0; i < M; i++) {
    const crow = c + ((<usize>i * <usize>N) << 2);
    for (let k = 0; k < K; k++) {
      const x = load<i32>(a + (<usize>(i * sam + k * sak) << 2));
      if (x == 0) continue;
      const brow = b + (<usize>(k * sbk) << 2);
      let j = 0;
      if (sbn == 1) {
        const xv = i32x4.splat(x);
        for (; j + 8 <= N; j += 8) {
          const p = crow + (<usize>j << 2);
          const q = brow + (<usize>j << 2);
          v128.store(p, i32x4.add(v128.load(p), i32x4.mul(xv, v128.load(q))));
          v128.store(p + 16, i32x4.add(v128.load(p + 16), i32x4.mul(xv, v128.load(q + 16))));
        }
        for (; j + 4 <= N; j += 4) {
          const p = crow + (<usize>j << 2);
          v128.store(p, i32x4.add(v128.load(p), i32x4.mul(xv, v128.load(brow + (<usize>j << 2)))));
        }
      }
      for (; j < N; j++) {
        const p = crow + (<usize>j << 2);
        store<i32>(p, load<i32>(p) + x * load<i32>(brow + (<usize>(j * sbn) << 2)));
      }
    }
  }
}
