// tests/browser/run.mjs — drives Debian's headless Chromium (playwright-core, no browser
// download) against a local debitd for tests/e2e/browser_page.sh, which makes the checks:
// this script only runs a client and prints, as one JSON object on stdout, what the page
// showed and what went over the wire.
//
//   node run.mjs page BASE OUTDIR [SECONDS]   debitd's own front page (BASE/), its test run
//   node run.mjs cloudflare BASE OUTDIR       @cloudflare/speedtest against BASE/__down, /__up
//   node run.mjs ndt7 BASE OUTDIR             @m-lab/ndt7 (ndt7-js) against BASE's /ndt/v7/*
//
// The third-party clients come from node_modules as they are (no CDN, no bundler) and are
// served to the browser by a static server on 127.0.0.1 in this process. Every host name
// resolves to nothing (--host-resolver-rules), and every request the browser makes is
// listed in the output ("outside": any not to 127.0.0.1).
import { chromium } from 'playwright-core';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const [mode, base, outdir, secondsArg] = process.argv.slice(2);
if (!mode || !base || !outdir) {
  console.error('usage: node run.mjs page|cloudflare|ndt7 BASE OUTDIR [SECONDS]');
  process.exit(2);
}
const CHROMIUM = process.env.DEBIT_CHROMIUM || '/usr/bin/chromium';
const TIMEOUT_MS = Number(process.env.DEBIT_BROWSER_TIMEOUT_MS || 120000);
const require = createRequire(import.meta.url);

// The flags the machine notes give for a closed network: no background traffic, no QUIC, and
// every name mapped to nothing (an IP literal such as 127.0.0.1 is not a name).
const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-default-apps', '--disable-extensions', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

async function launch() {
  const profile = mkdtempSync(join(outdir, 'chromium-profile-'));
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1200, height: 900 },
  });
}

// Every request and failure, with the responses' headers for the paths a check reads.
function watch(page, wire) {
  wire.requests = [];
  wire.failed = [];
  wire.outside = [];
  wire.responses = [];
  page.on('request', (rq) => {
    const u = rq.url();
    wire.requests.push(rq.method() + ' ' + u);
    if (/^(https?|wss?):/.test(u) && new URL(u).hostname !== '127.0.0.1') wire.outside.push(u);
  });
  page.on('requestfailed', (rq) => wire.failed.push(rq.url() + ': ' + (rq.failure() || {}).errorText));
  page.on('websocket', (ws) => {
    wire.requests.push('WS ' + ws.url());
    if (new URL(ws.url()).hostname !== '127.0.0.1') wire.outside.push(ws.url());
  });
  wire.http_errors = [];
  page.on('response', (rs) => { if (rs.status() >= 400) wire.http_errors.push(rs.status() + ' ' + rs.url()); });
  page.on('console', (m) => { if (m.type() === 'error') wire.failed.push('console: ' + m.text()); });
  page.on('pageerror', (e) => wire.failed.push('pageerror: ' + e.message));
}

// A static server on 127.0.0.1 for the third-party clients: NAME -> [file, type].
function serve(files) {
  return new Promise((resolve) => {
    const srv = createServer((rq, rs) => {
      const f = files[new URL(rq.url, 'http://x').pathname];
      if (!f) { rs.writeHead(404); rs.end(); return; }
      rs.writeHead(200, { 'Content-Type': f[1], 'Cache-Control': 'no-store' });
      rs.end(typeof f[0] === 'string' && f[0].startsWith('/') ? readFileSync(f[0]) : f[0]);
    });
    srv.listen(0, '127.0.0.1', () => resolve(srv));
  });
}

async function runPage(ctx, out) {
  const page = ctx.pages()[0] || await ctx.newPage();
  const wire = {};
  watch(page, wire);
  const ids = [];
  page.on('response', (rs) => {
    const id = rs.headers()['x-debit-transfer'];
    if (id && rs.request().method() === 'GET') ids.push(id);
  });
  const secs = secondsArg || '4';
  await page.goto(base + '/?seconds=' + secs + '&streams=4', { waitUntil: 'load' });
  out.title = await page.title();
  await page.click('#start');
  await page.waitForFunction(() => window.debitResult && (window.debitResult.done || window.debitResult.error),
    null, { timeout: TIMEOUT_MS, polling: 250 });
  await page.evaluate(() => { document.getElementById('transfers-details').open = true; });
  await page.screenshot({ path: join(outdir, 'page.png'), fullPage: true });
  out.result = await page.evaluate(() => window.debitResult);
  out.shown = await page.evaluate(() => {
    const t = (id) => document.getElementById(id).textContent.trim();
    const rows = [...document.querySelectorAll('#transfers tbody tr')].map((tr) => ({
      id: tr.dataset.id,
      rate: tr.querySelector('.rate').textContent,
      rtt: tr.querySelector('.rtt').textContent,
      retrans: tr.querySelector('.retrans').textContent,
      limit: tr.querySelector('.lim').firstChild.textContent,
    }));
    return {
      state: t('state'), down: t('down-mbps'), up: t('up-mbps'), lat_idle: t('lat-idle'),
      lat_down: t('lat-down'), lat_up: t('lat-up'), server_summary: t('server-summary'),
      limit_summary: t('limit-summary'), upload_summary: t('upload-summary'), rows,
    };
  });
  out.wire_ids = ids;
  out.wire = wire;
}

async function runCloudflare(ctx, out) {
  const lib = require.resolve('@cloudflare/speedtest');
  // Fewer steps than the defaults, up to their largest body (250 MB: the last bytes a server
  // hands its kernel are still in the buffers when its record ends, less of the time the
  // larger the body), every step run (by default a direction stops after a request of 1 s:
  // bandwidthFinishRequestDuration);
  // no packet loss (it needs a TURN server) and no result logging (logAimApiUrl: null).
  const html = `<!DOCTYPE html><meta charset="utf-8"><title>cf</title><script type="module">
import SpeedTest from '/speedtest.js';
const t = new SpeedTest({ autoStart: false, downloadApiUrl: ${JSON.stringify(base + '/__down')},
  uploadApiUrl: ${JSON.stringify(base + '/__up')}, logAimApiUrl: null, measurements: [
  { type: 'latency', numPackets: 5 },
  { type: 'download', bytes: 1e5, count: 1, bypassMinDuration: true },
  { type: 'download', bytes: 1e6, count: 2 },
  { type: 'upload', bytes: 1e6, count: 2 },
  { type: 'download', bytes: 1e8, count: 1 },
  { type: 'upload', bytes: 1e7, count: 2 },
  { type: 'download', bytes: 2.5e8, count: 3 } ],
  bandwidthFinishRequestDuration: 60000 });
t.onFinish = (r) => { window.cfResult = { down_bps: r.getDownloadBandwidth(), up_bps: r.getUploadBandwidth(),
  latency_ms: r.getUnloadedLatency(), down_points: r.getDownloadBandwidthPoints(),
  up_points: r.getUploadBandwidthPoints() }; };
t.onError = (e) => { window.cfError = String(e); };
t.play();
</script>`;
  const srv = await serve({ '/': [html, 'text/html'], '/favicon.ico': ['', 'image/x-icon'], '/speedtest.js': [lib, 'text/javascript'] });
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    const wire = {};
    watch(page, wire);
    const downs = [];
    page.on('response', (rs) => {
      const u = new URL(rs.url());
      if (u.pathname === '/__down')
        downs.push({ bytes: Number(u.searchParams.get('bytes')), status: rs.status(), id: rs.headers()['x-debit-transfer'] || null });
    });
    await page.goto('http://127.0.0.1:' + srv.address().port + '/', { waitUntil: 'load' });
    await page.waitForFunction(() => window.cfResult || window.cfError, null, { timeout: TIMEOUT_MS, polling: 250 });
    out.result = await page.evaluate(() => window.cfResult || null);
    out.error = await page.evaluate(() => window.cfError || null);
    out.downs = downs;
    out.wire = wire;
  } finally {
    srv.close();
  }
}

async function runNdt7(ctx, out) {
  const src = dirname(require.resolve('@m-lab/ndt7'));
  const host = new URL(base).host;
  const html = `<!DOCTYPE html><meta charset="utf-8"><title>ndt7</title><script src="/ndt7.js"></script><script>
window.ndt7Events = [];
ndt7.test({ server: ${JSON.stringify(host)}, protocol: 'ws', mlabDataPolicyInapplicable: true,
  downloadworkerfile: '/ndt7-download-worker.js', uploadworkerfile: '/ndt7-upload-worker.js' }, {
  error: (e) => { window.ndt7Error = String(e); },
  downloadMeasurement: (m) => { if (m.Source === 'server') window.ndt7Events.push(m.Data); },
  downloadComplete: (d) => { window.ndt7Down = d; },
  uploadComplete: (d) => { window.ndt7Up = d; },
}).then((code) => { window.ndt7Code = code; }, (e) => { window.ndt7Error = String(e); });
</script>`;
  const srv = await serve({
    '/': [html, 'text/html'], '/favicon.ico': ['', 'image/x-icon'], '/ndt7.js': [join(src, 'ndt7.js'), 'text/javascript'],
    '/ndt7-download-worker.js': [join(src, 'ndt7-download-worker.js'), 'text/javascript'],
    '/ndt7-upload-worker.js': [join(src, 'ndt7-upload-worker.js'), 'text/javascript'],
  });
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    const wire = {};
    watch(page, wire);
    await page.goto('http://127.0.0.1:' + srv.address().port + '/', { waitUntil: 'load' });
    await page.waitForFunction(() => window.ndt7Code !== undefined || window.ndt7Error, null,
      { timeout: TIMEOUT_MS, polling: 250 });
    out.code = await page.evaluate(() => window.ndt7Code ?? null);
    out.error = await page.evaluate(() => window.ndt7Error || null);
    out.download = await page.evaluate(() => window.ndt7Down || null);
    out.upload = await page.evaluate(() => window.ndt7Up || null);
    out.server_events = await page.evaluate(() => window.ndt7Events.length);
    out.wire = wire;
  } finally {
    srv.close();
  }
}

const out = { mode, base };
const ctx = await launch();
try {
  if (mode === 'page') await runPage(ctx, out);
  else if (mode === 'cloudflare') await runCloudflare(ctx, out);
  else if (mode === 'ndt7') await runNdt7(ctx, out);
  else throw new Error('unknown mode ' + mode);
} catch (e) {
  out.harness_error = String(e && e.stack ? e.stack : e);
} finally {
  await ctx.close();
}
process.stdout.write(JSON.stringify(out) + '\n');
