// One SVG chart of a harness row over its sizes (PolyHAL vs peer per backend), for docs/results/charts/ (written by
// scripts/results-docs.mjs from benches/results). Rows: { backend, size, unit, work, medianMs, peer, peerMedianMs }.
const COLORS = { cpu: '#1f77b4', wasm: '#2ca02c', webgpu: '#d62728' };

/** A log-x line chart of throughput (or time) against size for one suite. */
export function svg(suite, rows) {
  const W = 640,
    H = 360,
    L = 70,
    R = 150,
    T = 30,
    B = 50;
  const value = (r, ms) => (r.work && r.unit !== 'ms' ? r.work / (ms / 1000) : ms);
  const pts = [];
  for (const r of rows) {
    pts.push({
      series: `polyhal-${r.backend}`,
      color: COLORS[r.backend],
      dash: '',
      x: r.size,
      y: value(r, r.medianMs),
    });
    if (r.peerMedianMs !== null)
      pts.push({ series: r.peer, color: COLORS[r.backend], dash: '6 4', x: r.size, y: value(r, r.peerMedianMs) });
  }
  if (pts.length === 0) return '';
  const xs = pts.map((p) => Math.log2(p.x));
  const [x0, x1] = [Math.min(...xs), Math.max(...xs) === Math.min(...xs) ? Math.min(...xs) + 1 : Math.max(...xs)];
  const y1 = Math.max(...pts.map((p) => p.y)) * 1.1 || 1;
  const X = (x) => L + ((Math.log2(x) - x0) / (x1 - x0)) * (W - L - R);
  const Y = (y) => H - B - (y / y1) * (H - T - B);
  const series = [...new Set(pts.map((p) => p.series))];
  const unit = rows[0].work && rows[0].unit !== 'ms' ? rows[0].unit : 'ms (lower is better)';
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${L}" y="18" font-size="14">${suite}</text>`,
    `<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="black"/><line x1="${L}" ` +
      `y1="${T}" x2="${L}" y2="${H - B}" stroke="black"/>`,
    `<text x="${(L + W - R) / 2}" y="${H - 12}" text-anchor="middle">size</text>`,
    `<text x="14" y="${(T + H - B) / 2}" transform="rotate(-90 14 ${(T + H - B) / 2})" ` +
      `text-anchor="middle">${unit}</text>`,
  ];
  for (const s of [...new Set(pts.map((p) => p.x))])
    out.push(
      `<text x="${X(s)}" y="${H - B + 16}" ` +
        `text-anchor="middle">${s >= 1 << 20 ? `${s / (1 << 20)}M` : s >= 1024 ? `${s / 1024}K` : s}</text>`,
    );
  for (let i = 0; i <= 4; i++)
    out.push(`<text x="${L - 6}" y="${Y((y1 * i) / 4) + 4}" text-anchor="end">${((y1 * i) / 4).toPrecision(3)}</text>`);
  series.forEach((name, i) => {
    const p = pts.filter((q) => q.series === name).sort((a, b) => a.x - b.x);
    out.push(
      `<polyline fill="none" stroke="${p[0].color}" stroke-width="2" stroke-dasharray="${p[0].dash}" ` +
        `points="${p.map((q) => `${X(q.x)},${Y(q.y)}`).join(' ')}"/>`,
    );
    for (const q of p) out.push(`<circle cx="${X(q.x)}" cy="${Y(q.y)}" r="3" fill="${q.color}"/>`);
    out.push(
      `<line x1="${W - R + 10}" y1="${T + 10 + i * 18}" x2="${W - R + 34}" y2="${T + 10 + i * 18}" ` +
        `stroke="${p[0].color}" stroke-width="2" stroke-dasharray="${p[0].dash}"/><text ` +
        `x="${W - R + 40}" y="${T + 14 + i * 18}">${name}</text>`,
    );
  });
  out.push('</svg>');
  return out.join('\n');
}
