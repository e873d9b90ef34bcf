// Nearest-neighbour resize (float32), the wasm backend's fast path for resize in mode 'nearest'
// (src/dispatch-resize.ts): one gather over every axis, the input index of each output position per axis
// computed on the host (the composite's own indices) and passed as one table per axis. y (row-major) is taken
// row by row along its last axis: an output row whose input row is the previous output row's (an upscale
// along an outer axis) is a copy of that row; otherwise its elements are gathered through the last axis'
// table, or, for an integer upscale by f along a last axis of stride 1 (table[j] = ⌊j / f⌋), each input
// element stored f times (f = 2: one f32x4 load, two shuffles and two stores per 4 inputs). Parts split the
// output rows [row0, row1).
// Parameter block of i32 words (RS_*): rank r, x pointer (at x's offset), y pointer, f (0: none), then r
// output sizes, r x strides (elements), r table starts (words from the block's start), then the tables.

export const RS_RANK = 0, RS_X = 1, RS_Y = 2, RS_FACTOR = 3, RS_SIZES = 4;

@inline function word(p: usize, i: i32): i32 { return load<i32>(p + (<usize>i << 2)); }

/** Output positions along the last axis, gathered from the input row at xr (element stride xs). */
function gatherRow(yr: usize, xr: usize, xs: i32, table: usize, n: i32): void {
  for (let j = 0; j < n; j++) {
    const i = load<i32>(table + (<usize>j << 2));
    store<f32>(yr + (<usize>j << 2), load<f32>(xr + ((<usize>(i * xs)) << 2)));
  }
}

/** Each of the n elements of the contiguous input row at xr stored f times into the output row at yr. */
function repeatRow(yr: usize, xr: usize, n: i32, f: i32): void {
  let i = 0;
  if (f == 2) {
    for (; i + 4 <= n; i += 4) {
      const v = v128.load(xr + (<usize>i << 2));
      const p = yr + (<usize>i << 3);
      v128.store(p, v128.shuffle<f32>(v, v, 0, 0, 1, 1));
      v128.store(p, v128.shuffle<f32>(v, v, 2, 2, 3, 3), 16);
    }
  }
  for (; i < n; i++) {
    const s = load<f32>(xr + (<usize>i << 2));
    let p = yr + ((<usize>i * <usize>f) << 2);
    let k = 0;
    if (f >= 4) {
      const v = f32x4.splat(s);
      for (; k + 4 <= f; k += 4) {
        v128.store(p, v);
        p += 16;
      }
    }
    for (; k < f; k++) {
      store<f32>(p, s);
      p += 4;
    }
  }
}

/**
 * Output rows [row0, row1) of a nearest resize described by the parameter block at `params` (RS_* words);
 * `scratch` holds r i32 words (the part's odometer over the outer axes).
 */
export function resizeNearest(params: usize, row0: i32, row1: i32, scratch: usize): void {
  const r = word(params, RS_RANK);
  const x = <usize>load<u32>(params + (<usize>RS_X << 2));
  const y = <usize>load<u32>(params + (<usize>RS_Y << 2));
  const f = word(params, RS_FACTOR);
  const sizes = params + (<usize>RS_SIZES << 2);
  const strides = sizes + (<usize>r << 2);
  const starts = strides + (<usize>r << 2);
  const inner = load<i32>(sizes + (<usize>(r - 1) << 2));
  const xs = load<i32>(strides + (<usize>(r - 1) << 2));
  const lastTable = params + (<usize>load<i32>(starts + (<usize>(r - 1) << 2)) << 2);
  const nIn = f > 0 ? inner / f : 0;
  const rowBytes = <usize>inner << 2;
  // the output coordinates of row0 along the outer axes (an odometer, advanced row by row)
  const coord = scratch;
  let rem = row0;
  for (let a = r - 2; a >= 0; a--) {
    const d = load<i32>(sizes + (<usize>a << 2));
    store<i32>(coord + (<usize>a << 2), rem % d);
    rem /= d;
  }
  let prev = -1;
  for (let row = row0; row < row1; row++) {
    let base = 0;
    for (let a = 0; a < r - 1; a++) {
      const table = params + (<usize>load<i32>(starts + (<usize>a << 2)) << 2);
      const c = load<i32>(coord + (<usize>a << 2));
      base += load<i32>(table + (<usize>c << 2)) * load<i32>(strides + (<usize>a << 2));
    }
    const yr = y + <usize>row * rowBytes;
    if (base == prev) memory.copy(yr, yr - rowBytes, rowBytes);
    else if (f > 0) repeatRow(yr, x + (<usize>base << 2), nIn, f);
    else gatherRow(yr, x + (<usize>base << 2), xs, lastTable, inner);
    prev = base;
    for (let a = r - 2; a >= 0; a--) {
      const p = coord + (<usize>a << 2);
      const c = load<i32>(p) + 1;
      if (c < load<i32>(sizes + (<usize>a << 2))) {
        store<i32>(p, c);
        break;
      }
      store<i32>(p, 0);
    }
  }
}
