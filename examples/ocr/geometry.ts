/** Plane geometry for text boxes: convex hull, minimum-area rectangle, corner order, point in polygon. */

export type Point = readonly [x: number, y: number];
/** A box's four corners: top-left, top-right, bottom-right, bottom-left. */
export type Quad = readonly [Point, Point, Point, Point];

const cross = (o: Point, a: Point, b: Point): number => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);

/** The convex hull of `points` (Andrew's monotone chain), counter-clockwise in image axes, no repeated point. */
export function convexHull(points: readonly Point[]): Point[] {
  const p = [...points].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  if (p.length < 3) return p;
  const lower: Point[] = [];
  for (const q of p) {
    while (lower.length >= 2 && cross(lower[lower.length - 2] as Point, lower[lower.length - 1] as Point, q) <= 0)
      lower.pop();
    lower.push(q);
  }
  const upper: Point[] = [];
  for (let i = p.length - 1; i >= 0; i--) {
    const q = p[i] as Point;
    while (upper.length >= 2 && cross(upper[upper.length - 2] as Point, upper[upper.length - 1] as Point, q) <= 0)
      upper.pop();
    upper.push(q);
  }
  lower.pop();
  upper.pop();
  return lower.concat(upper);
}

/** A rotated rectangle: centre, side lengths along the unit axis u and its normal, and its corners. */
export interface Rect {
  readonly center: Point;
  readonly u: Point;
  readonly width: number;
  readonly height: number;
}

/** The rectangle of least area holding `points` (one side lies on a hull edge: rotating calipers). */
export function minAreaRect(points: readonly Point[]): Rect {
  const hull = convexHull(points);
  if (hull.length === 0) throw new RangeError('minAreaRect: no points');
  if (hull.length === 1) return { center: hull[0] as Point, u: [1, 0], width: 0, height: 0 };
  let best: Rect | null = null;
  let bestArea = Number.POSITIVE_INFINITY;
  for (let i = 0; i < hull.length; i++) {
    const a = hull[i] as Point;
    const b = hull[(i + 1) % hull.length] as Point;
    const len = Math.hypot(b[0] - a[0], b[1] - a[1]);
    if (len === 0) continue;
    const u: Point = [(b[0] - a[0]) / len, (b[1] - a[1]) / len];
    let minU = Number.POSITIVE_INFINITY;
    let maxU = Number.NEGATIVE_INFINITY;
    let minV = Number.POSITIVE_INFINITY;
    let maxV = Number.NEGATIVE_INFINITY;
    for (const q of hull) {
      const pu = q[0] * u[0] + q[1] * u[1];
      const pv = -q[0] * u[1] + q[1] * u[0];
      minU = Math.min(minU, pu);
      maxU = Math.max(maxU, pu);
      minV = Math.min(minV, pv);
      maxV = Math.max(maxV, pv);
    }
    const area = (maxU - minU) * (maxV - minV);
    if (area < bestArea - 1e-9) {
      bestArea = area;
      const cu = (minU + maxU) / 2;
      const cv = (minV + maxV) / 2;
      best = { center: [cu * u[0] - cv * u[1], cu * u[1] + cv * u[0]], u, width: maxU - minU, height: maxV - minV };
    }
  }
  return best as Rect;
}

/** `rect` grown by `d` on every side. */
export const grow = (rect: Rect, d: number): Rect => ({
  ...rect,
  width: rect.width + 2 * d,
  height: rect.height + 2 * d,
});

/** A rectangle's corners as PaddleOCR orders them: left pair by y (top-left, bottom-left), right pair by y. */
export function corners(rect: Rect): Quad {
  const { center: c, u, width: w, height: h } = rect;
  const v: Point = [-u[1], u[0]];
  const at = (su: number, sv: number): Point => [
    c[0] + (su * w * u[0]) / 2 + (sv * h * v[0]) / 2,
    c[1] + (su * w * u[1]) / 2 + (sv * h * v[1]) / 2,
  ];
  const p = [at(-1, -1), at(1, -1), at(1, 1), at(-1, 1)].sort((a, b) => a[0] - b[0]);
  const [l0, l1, r0, r1] = p as [Point, Point, Point, Point];
  const [tl, bl] = l0[1] <= l1[1] ? [l0, l1] : [l1, l0];
  const [tr, br] = r0[1] <= r1[1] ? [r0, r1] : [r1, r0];
  return [tl, tr, br, bl];
}

/** Whether (x, y) lies inside the convex polygon `poly` or on its boundary. */
export function insideConvex(poly: readonly Point[], x: number, y: number): boolean {
  let sign = 0;
  for (let i = 0; i < poly.length; i++) {
    const c = cross(poly[i] as Point, poly[(i + 1) % poly.length] as Point, [x, y]);
    if (Math.abs(c) < 1e-9) continue;
    const s = Math.sign(c);
    if (sign === 0) sign = s;
    else if (s !== sign) return false;
  }
  return true;
}

export const distance = (a: Point, b: Point): number => Math.hypot(a[0] - b[0], a[1] - b[1]);
