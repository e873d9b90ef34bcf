/**
 * Images of known text for the OCR example's tests: lines drawn on a canvas in headless Chromium (Debian's
 * /usr/bin/chromium driven by playwright-core, as tests/runtimes/browser.test.ts runs it) with a font from
 * Debian's fonts-dejavu-core (scripts/setup.mjs installs it), read back as RGBA bytes.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import type { Point, Quad } from '../../examples/ocr/geometry.js';
import type { RgbaImage } from '../../examples/ocr/image.js';

const CHROMIUM = process.env['POLYHAL_CHROMIUM'] ?? '/usr/bin/chromium';

/** One line of text to draw: where its baseline starts, the font size in px, the angle in degrees. */
export interface TextLine {
  readonly text: string;
  readonly x: number;
  readonly y: number;
  readonly size: number;
  readonly angle?: number;
  /** Extra space between words in px (canvas wordSpacing; default 0). */
  readonly wordSpacing?: number;
}

/** A rendered image and, per line, the corners of its ink (tl, tr, br, bl) from the canvas's text metrics. */
export interface Rendered {
  readonly image: RgbaImage;
  readonly ink: Quad[];
}

/** A renderer: one headless Chromium page, reused for every image. */
export interface TextRenderer {
  render(width: number, height: number, lines: readonly TextLine[], font?: string): Promise<Rendered>;
  close(): Promise<void>;
}

/** Starts headless Chromium; throws with the install command when it is missing. */
export async function textRenderer(): Promise<TextRenderer> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} not found: apt-get install chromium (npm test's pretest does)`);
  const profile = mkdtempSync(join(tmpdir(), 'polyhal-ocr-chromium-'));
  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run', '--disable-sync'],
    env: { ...process.env, XDG_CONFIG_HOME: profile, XDG_CACHE_HOME: profile },
  });
  const page = await browser.newPage();
  await page.setContent('<!doctype html><canvas></canvas>');
  return {
    async render(width, height, lines, font = 'DejaVu Sans') {
      const { b64, ink } = await page.evaluate(
        async ({ width, height, lines, font }) => {
          await document.fonts.load(`32px "${font}"`);
          if (!document.fonts.check(`32px "${font}"`)) throw new Error(`font ${font} not available`);
          const canvas = document.querySelector('canvas') as HTMLCanvasElement;
          canvas.width = width;
          canvas.height = height;
          const ctx = canvas.getContext('2d') as CanvasRenderingContext2D;
          ctx.fillStyle = '#fff';
          ctx.fillRect(0, 0, width, height);
          ctx.fillStyle = '#111';
          const ink: [number, number][][] = [];
          for (const l of lines) {
            ctx.save();
            ctx.font = `${l.size}px "${font}"`;
            ctx.wordSpacing = `${l.wordSpacing ?? 0}px`;
            ctx.translate(l.x, l.y);
            const a = ((l.angle ?? 0) * Math.PI) / 180;
            ctx.rotate(a);
            ctx.fillText(l.text, 0, 0);
            const m = ctx.measureText(l.text);
            ctx.restore();
            const at = (u: number, v: number): [number, number] => [
              l.x + u * Math.cos(a) - v * Math.sin(a),
              l.y + u * Math.sin(a) + v * Math.cos(a),
            ];
            const [x0, x1] = [-m.actualBoundingBoxLeft, m.actualBoundingBoxRight];
            const [y0, y1] = [-m.actualBoundingBoxAscent, m.actualBoundingBoxDescent];
            ink.push([at(x0, y0), at(x1, y0), at(x1, y1), at(x0, y1)]);
          }
          const bytes = ctx.getImageData(0, 0, width, height).data;
          let s = '';
          for (let i = 0; i < bytes.length; i += 0x8000)
            s += String.fromCharCode(...bytes.subarray(i, Math.min(i + 0x8000, bytes.length)));
          return { b64: btoa(s), ink };
        },
        { width, height, lines, font },
      );
      const image = { width, height, data: new Uint8Array(Buffer.from(b64, 'base64')) };
      return { image, ink: ink.map((q) => q.map((p) => [p[0], p[1]] as Point) as unknown as Quad) };
    },
    close: () => browser.close(),
  };
}
