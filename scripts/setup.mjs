// `npm test`'s set-up step (pretest): installs what the tests need and this machine lacks, and says so.
//  1. Debian packages: Mesa's lavapipe (software Vulkan, so WebGPU runs without a GPU; Dawn needs Mesa
//     ≥ 24, which bookworm has only in bookworm-backports), Debian's Chromium (the browser tests),
//     fonts-dejavu-core (the OCR example's test lines) and libonnx-testdata (ONNX's backend node tests,
//     read by the conformance kit; never committed).
//     Installed with apt-get as root, or through sudo; without either it stops at once and prints the
//     exact commands to run.
//  2. The extra JavaScript runtimes (Deno, Bun, Node.js LTS lines) from npm into .tools/.
// Everything is checked first and installed only when missing; a second run installs nothing.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const BACKPORTS_FILE = '/etc/apt/sources.list.d/backports.sources';

const run = (cmd, args) => spawnSync(cmd, args, { encoding: 'utf8' });
const has = (cmd) => run('sh', ['-c', `command -v ${cmd}`]).status === 0;

function osRelease() {
  try {
    return Object.fromEntries(
      readFileSync('/etc/os-release', 'utf8')
        .split('\n')
        .filter((l) => l.includes('='))
        .map((l) => {
          const i = l.indexOf('=');
          return [l.slice(0, i), l.slice(i + 1).replace(/^"|"$/g, '')];
        }),
    );
  } catch {
    return {};
  }
}

function debVersion(pkg) {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format fields
  const r = run('dpkg-query', ['-W', '-f=${Status} ${Version}', pkg]);
  const m = /install ok installed (\S+)/.exec(r.stdout ?? '');
  return m ? m[1] : null;
}

const release = osRelease();
const codename = release.VERSION_CODENAME ?? '';
const backports = codename === 'bookworm';

/** What the tests need from the system: a check, and the Debian packages that satisfy it. */
const NEEDS = [
  {
    what: "Mesa's lavapipe (software Vulkan ≥ 24: WebGPU without a GPU)",
    present: () => {
      const v = debVersion('mesa-vulkan-drivers');
      return v !== null && Number.parseInt(v, 10) >= 24 && debVersion('libvulkan1') !== null;
    },
    packages: ['mesa-vulkan-drivers', 'libvulkan1'],
    backports,
  },
  {
    what: "Debian's Chromium (the browser tests)",
    present: () => existsSync('/usr/bin/chromium'),
    packages: ['chromium'],
    backports: false,
  },
  {
    what: 'the DejaVu fonts (the OCR example draws its test lines in DejaVu Sans)',
    present: () => existsSync('/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf'),
    packages: ['fonts-dejavu-core'],
    backports: false,
  },
  {
    what: "ONNX's backend node tests (the conformance kit's ONNX run)",
    present: () => existsSync('/usr/share/libonnx-testdata/data/node'),
    packages: ['libonnx-testdata'],
    backports: false,
  },
];

function commands(missing) {
  const cmds = [];
  if (missing.some((n) => n.backports) && !existsSync(BACKPORTS_FILE)) {
    cmds.push(
      `printf 'Types: deb\\nURIs: http://deb.debian.org/debian\\nSuites: ` +
        `bookworm-backports\\nComponents: main\\nSigned-By: ` +
        `/usr/share/keyrings/debian-archive-keyring.gpg\\n' > ${BACKPORTS_FILE}`,
    );
  }
  cmds.push('apt-get update -qq');
  const bp = missing.filter((n) => n.backports).flatMap((n) => n.packages);
  const plain = missing.filter((n) => !n.backports).flatMap((n) => n.packages);
  if (bp.length)
    cmds.push(`DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -t bookworm-backports ${bp.join(' ')}`);
  if (plain.length) cmds.push(`DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${plain.join(' ')}`);
  return cmds;
}

function systemPackages() {
  const missing = NEEDS.filter((n) => !n.present());
  if (!missing.length) {
    console.log(
      `system packages present: mesa-vulkan-drivers ${debVersion('mesa-vulkan-drivers')}, chromium ` +
        `${debVersion('chromium') ?? '(/usr/bin/chromium)'}, libonnx-testdata ` +
        `${debVersion('libonnx-testdata') ?? ''}`.trim(),
    );
    return;
  }
  for (const n of missing)
    console.log(
      `missing: ${n.what} — Debian package${n.packages.length > 1 ? 's' : ''} ` +
        `${n.packages.join(', ')}${n.backports ? ' (bookworm-backports)' : ''}`,
    );
  if (!has('apt-get') || !has('dpkg-query')) {
    console.error(
      "This machine has no apt-get: install the packages above by your system's means (Mesa's Vulkan " +
        'driver lavapipe ≥ 24 and Chromium at /usr/bin/chromium), then run npm test again.',
    );
    process.exit(1);
  }
  const cmds = commands(missing);
  const root = process.getuid?.() === 0;
  let prefix = null;
  if (root) prefix = [];
  else if (has('sudo') && (run('sudo', ['-n', 'true']).status === 0 || process.stdin.isTTY)) prefix = ['sudo'];
  if (prefix === null) {
    console.error('\nInstalling them needs root, and this user has neither root nor sudo. Run as root:\n');
    for (const c of cmds) console.error(`  ${c}`);
    console.error('\nthen run npm test again.');
    process.exit(1);
  }
  for (const c of cmds) {
    console.log(`installing: ${prefix.length ? 'sudo ' : ''}${c}`);
    // apt-get install's progress stays off the terminal; its errors still show.
    const quiet = c.startsWith('DEBIAN_FRONTEND') ? `${c} >/dev/null` : c;
    execFileSync(prefix.length ? 'sudo' : 'sh', [...(prefix.length ? ['sh'] : []), '-c', quiet], { stdio: 'inherit' });
  }
  const still = NEEDS.filter((n) => !n.present());
  if (still.length) {
    console.error(`still missing after apt-get: ${still.map((n) => n.packages.join(', ')).join('; ')}`);
    process.exit(1);
  }
  console.log(
    `installed: ${missing
      .flatMap((n) => n.packages)
      .map((p) => `${p} ${debVersion(p)}`)
      .join(', ')}`,
  );
}

if (process.platform === 'linux' && process.env.POLYHAL_SKIP_SYSTEM_SETUP !== '1') systemPackages();
await import('./install-runtimes.mjs');
