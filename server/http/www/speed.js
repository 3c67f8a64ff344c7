/* debitd's browser speed test: plain JavaScript, no library, no request to any other origin.
 *
 * Phases: latency while idle (HEAD of a test file, timed by Resource Timing), download over
 * STREAMS connections (GET /__down?bytes=N where debitd has it, else Range requests of the
 * largest test file; each chunk doubling while it takes under 0.4 s), upload over STREAMS
 * connections (POST to /__up, else to the upload sink), each for SECONDS, with a latency
 * probe every 250 ms during both. Then the page asks debitd for its record of each transfer
 * (/transfers/ID, ID from the X-Debit-Transfer header) and shows what the server saw: its
 * rate, RTT, retransmissions and what limited the transfer.
 *
 * ?seconds=N (1-30, default 8) and ?streams=N (1-5, default 4) change the test; ?autostart=1
 * starts it at once. window.debitResult holds the figures shown, for scripts. */
'use strict';

(function () {
  const cfg = JSON.parse(document.getElementById('debit-config').textContent);
  const params = new URLSearchParams(location.search);
  const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
  const SECONDS = clamp(Number(params.get('seconds')) || 8, 1, 30);
  /* Chromium and Firefox open at most 6 HTTP/1.1 connections per host: one is kept for the
   * latency probes */
  const STREAMS = Math.min(clamp(Math.floor(Number(params.get('streams'))) || 4, 1, 5),
    /* speedtest.per_ip: the tests one address may have under way (a probe is not one) */
    (cfg.cloudflare && cfg.cloudflare.per_ip) || 5);
  const CHUNK_FIRST = 1 << 20;
  const CHUNK_MAX = 256 << 20;
  /* each upload body is a Blob the browser keeps whole until sent: Chromium refuses large
   * ones in all (net::ERR_BLOB_OUT_OF_MEMORY seen at 4 x 256 MiB) */
  const UPLOAD_MAX = 32 << 20;
  const CHUNK_AIM_MS = 400;
  const PROBE_EVERY_MS = 250;
  const IDLE_PROBES = 10;

  const $ = (id) => document.getElementById(id);
  const now = () => performance.now();
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  /* What limited a transfer (debitd's limited_by), in a visitor's words. */
  const LIMITS = {
    network: 'the path between you and this server (its capacity)',
    receiver_window: 'your receive window (how much your device lets arrive before it answers)',
    sender_buffer: "this server's send buffer",
    sender_cpu: "this server's CPU",
    congestion: 'congestion control (losses or slow start on the path)',
    receiver_cpu: "your device's CPU",
    unknown: 'nothing this server could single out',
  };

  function limitWords(rec) {
    if (!rec || !('limited_by' in rec) || rec.limited_by === null || rec.limited_by === undefined)
      return 'not judged';
    return LIMITS[rec.limited_by] || rec.limited_by;
  }

  function limitEvidence(rec) {
    if (!rec) return '';
    const e = rec.limited_by_evidence !== undefined ? rec.limited_by_evidence : rec.evidence;
    return typeof e === 'string' ? e : '';
  }

  function mbps(bytes, seconds) {
    return seconds > 0 ? (bytes * 8) / seconds / 1e6 : 0;
  }

  /* Three significant figures at most, no thousands separator (scripts read it back). */
  function fmt(v) {
    if (!isFinite(v)) return '\u2013';
    if (v >= 100) return v.toFixed(0);
    if (v >= 10) return v.toFixed(1);
    return v.toFixed(2);
  }

  function fmtBytes(n) {
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : String(n)) + ' ' + u[i];
  }

  function median(a) {
    if (!a.length) return NaN;
    const s = a.slice().sort((x, y) => x - y);
    const m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  }

  function setState(text) { $('state').textContent = text; }

  /* The largest test file downloads; the smallest answers the latency probes (HEAD: no body,
   * no transfer record). */
  const files = (cfg.files || []).slice().sort((a, b) => a.size - b.size);
  const bigFile = files[files.length - 1];
  const probeFile = files[0];

  /* Where the test goes. Where debitd has the Cloudflare-style endpoints (GET /__down?bytes=N,
   * POST /__up: each request a transfer with its record, uploads too), those; else Range
   * requests of the largest file and the upload sink (whose answers {"bytes", "seconds"} are
   * then the server's side of the uploads). */
  function endpoints() {
    const cf = cfg.cloudflare; /* null: speedtest.cloudflare is off */
    const sinkMax = Math.min(UPLOAD_MAX, cfg.upload_max || UPLOAD_MAX);
    const cfMax = cf && cf.max_bytes ? cf.max_bytes : CHUNK_MAX;
    return {
      cf: !!cf,
      downPath: cf ? cf.down : bigFile ? bigFile.path : null,
      down: cf ? (len) => [cf.down + '?bytes=' + len, {}]
        : (len) => [bigFile.path, { Range: 'bytes=0-' + (len - 1) }],
      downMax: cf ? Math.min(CHUNK_MAX, cfMax) : bigFile ? Math.min(CHUNK_MAX, bigFile.size) : 0,
      upPath: cf ? cf.up : cfg.upload,
      upMax: cf ? Math.min(UPLOAD_MAX, cfMax) : sinkMax,
      probe: probeFile ? [probeFile.path, 'HEAD'] : cf ? [cf.down + '?bytes=0', 'GET'] : null,
    };
  }
  const ep = endpoints();

  /* One latency probe: the time from the request's start to the response's first byte, as
   * the browser's Resource Timing saw it (the fetch's own time when the entry is missing). */
  let probeSeq = 0;
  async function probe() {
    const url = new URL(ep.probe[0], location.href);
    url.searchParams.set('probe', String(++probeSeq));
    const t0 = now();
    const r = await fetch(url.href, { method: ep.probe[1], cache: 'no-store' });
    await r.arrayBuffer();
    const t1 = now();
    if (!r.ok) throw new Error('latency probe: HTTP ' + r.status);
    /* the entry is queued a moment after the response */
    for (let i = 0; i < 20; i++) {
      const e = performance.getEntriesByName(url.href).pop();
      if (e && e.responseStart > 0 && e.requestStart > 0) return e.responseStart - e.requestStart;
      await sleep(5);
    }
    return t1 - t0;
  }

  /* Probes every PROBE_EVERY_MS until STOP.done; their times go to OUT. */
  async function probeLoop(stop, out) {
    while (!stop.done) {
      const t = now();
      try { out.push(await probe()); } catch (e) { /* a lost probe under load: not a figure */ }
      const wait = PROBE_EVERY_MS - (now() - t);
      if (wait > 0) await sleep(wait);
    }
  }

  /* A refusal of a size (a server's speedtest.max_bytes below ours): 400 from /__down, 413
   * from an upload. The stream goes on with half of it. */
  function tooLarge(r, len) {
    return (r.status === 400 || r.status === 413) && len > CHUNK_FIRST;
  }

  /* One download stream: GETs until DEADLINE. */
  async function downStream(ph, deadline) {
    let size = CHUNK_FIRST, max = ep.downMax;
    while (now() < deadline) {
      const len = Math.min(size, max);
      const t0 = now();
      const [url, headers] = ep.down(len);
      const r = await fetch(url, { cache: 'no-store', headers });
      if (tooLarge(r, len)) { await r.arrayBuffer(); max = size = len / 2; continue; }
      if (r.status !== 206 && r.status !== 200) throw new Error('download: HTTP ' + r.status);
      const id = r.headers.get('X-Debit-Transfer');
      if (id) ph.ids.push(id);
      const reader = r.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        ph.bytes += value.byteLength;
      }
      ph.requests++;
      if (now() - t0 < CHUNK_AIM_MS && size < max) size *= 2;
    }
  }

  /* Upload bodies: random bytes (nothing on the way can compress them), one 1 MiB block
   * repeated. */
  let block = null;
  const bodies = new Map(); /* one Blob per size, reused: a new one is another copy */
  function body(len) {
    if (bodies.has(len)) return bodies.get(len);
    if (!block) {
      block = new Uint8Array(1 << 20);
      for (let i = 0; i < block.length; i += 65536) crypto.getRandomValues(block.subarray(i, i + 65536));
    }
    const parts = [];
    for (let left = len; left > 0; left -= block.length)
      parts.push(left >= block.length ? block : block.subarray(0, left));
    const b = new Blob(parts, { type: 'application/octet-stream' });
    bodies.set(len, b);
    return b;
  }

  /* One upload stream: POSTs until DEADLINE. /__up answers with an X-Debit-Transfer; the
   * sink with {"bytes": N, "seconds": T}, its own count and time. */
  async function upStream(ph, deadline) {
    let size = CHUNK_FIRST, max = ep.upMax;
    while (now() < deadline) {
      const len = Math.min(size, max);
      const t0 = now();
      const r = await fetch(ep.upPath, { method: 'POST', body: body(len), cache: 'no-store' });
      if (tooLarge(r, len)) { await r.arrayBuffer(); max = size = len / 2; continue; }
      if (!r.ok) throw new Error('upload: HTTP ' + r.status);
      const id = r.headers.get('X-Debit-Transfer');
      if (id) ph.ids.push(id);
      const text = await r.text();
      if (!ep.cf) ph.server.push(JSON.parse(text));
      ph.bytes += len;
      ph.requests++;
      if (now() - t0 < CHUNK_AIM_MS && size < max) size *= 2;
    }
  }

  /* Runs STREAMS copies of STREAM for SECONDS, probing latency meanwhile and showing the rate
   * as it goes. The rate is every byte over the time from the first request to the last byte
   * of the last one (the last chunks end a little after SECONDS). */
  async function phase(name, stream, numId) {
    const ph = { bytes: 0, requests: 0, ids: [], server: [], probes: [], seconds: 0 };
    const stop = { done: false };
    performance.clearResourceTimings();
    const t0 = now();
    const deadline = t0 + SECONDS * 1000;
    const tick = setInterval(() => {
      const s = (now() - t0) / 1000;
      $(numId).textContent = fmt(mbps(ph.bytes, s));
      setState(name + '\u2026 ' + Math.min(s, SECONDS).toFixed(0) + ' s of ' + SECONDS);
    }, 200);
    const probes = probeLoop(stop, ph.probes);
    try {
      const runs = [];
      for (let i = 0; i < STREAMS; i++) runs.push(stream(ph, deadline));
      await Promise.all(runs);
      ph.seconds = (now() - t0) / 1000;
    } finally {
      clearInterval(tick);
      stop.done = true;
      await probes;
    }
    ph.mbps = mbps(ph.bytes, ph.seconds);
    $(numId).textContent = fmt(ph.mbps);
    return ph;
  }

  /* debitd's record of transfer ID, once it is no longer "sending" nor waiting for the
   * acknowledgement of its last byte (acked_note "watching": the end is noted when the server
   * has handed over the last byte, the acknowledgement a moment later). */
  async function record(id) {
    for (let i = 0; i < 20; i++) {
      const r = await fetch(cfg.transfers + encodeURIComponent(id), { cache: 'no-store' });
      if (r.status === 404) return null;
      if (!r.ok) throw new Error('/transfers: HTTP ' + r.status);
      const j = await r.json();
      if (j.state !== 'sending' && j.acked_note !== 'watching') return j;
      await sleep(100);
    }
    return null;
  }

  async function records(ids) {
    const recs = [];
    let missing = 0;
    for (const id of ids) {
      const r = await record(id);
      if (r) recs.push(r); else missing++;
    }
    return { recs, missing };
  }

  /* How long a record took: to your acknowledgement of its last byte where debitd has it
   * (acked_s: what your own clock sees), else to its handing over to the kernel (duration_s:
   * the send buffer's worth earlier). */
  function recSeconds(r) {
    return typeof r.acked_s === 'number' ? r.acked_s : r.duration_s || 0;
  }

  /* The server's rate over a set of records: their bytes over the span from the first start
   * to the last end (recSeconds). */
  function serverSpan(recs) {
    let first = Infinity, last = -Infinity, bytes = 0;
    for (const r of recs) {
      const s = Date.parse(r.started) / 1000;
      first = Math.min(first, s);
      last = Math.max(last, s + recSeconds(r));
      bytes += r.bytes || 0;
    }
    return { bytes, seconds: last - first, mbps: mbps(bytes, last - first) };
  }

  function cell(tr, text, cls, why) {
    const td = document.createElement('td');
    td.textContent = text;
    if (cls) td.className = cls;
    if (why) {
      const s = document.createElement('span');
      s.className = 'why';
      s.textContent = why;
      td.appendChild(s);
    }
    tr.appendChild(td);
    return td;
  }

  function showRecords(recs, missing) {
    const tbody = $('transfers').querySelector('tbody');
    tbody.textContent = '';
    const verdicts = {};
    const rtts = [];
    const byConn = {};
    let retrans = 0;
    for (const r of recs) {
      const tcp = r.tcp || {};
      const tr = document.createElement('tr');
      tr.dataset.id = r.id;
      cell(tr, r.id.slice(0, 8), 'id').title = r.id;
      cell(tr, fmtBytes(r.bytes));
      /* a body that fits in the send buffer is "sent" when copied there, and one of a few
       * buffers mostly so (seen: 4 MiB through a 4 MB buffer "at" 88 Gbit/s): no rate to tell
       * from duration_s; the acknowledged figure has no such blind spot */
      const buf = r.sndbuf && r.sndbuf.so_sndbuf;
      const timed = typeof r.acked_mbps === 'number' ? r.acked_mbps
        : buf && r.bytes >= 4 * buf ? mbps(r.bytes, r.duration_s) : null;
      cell(tr, timed !== null ? fmt(timed) + ' Mbit/s' : 'too short to time', 'rate');
      cell(tr, tcp.rtt_ms !== undefined ? tcp.rtt_ms + ' ms' : '\u2013', 'rtt');
      cell(tr, tcp.total_retrans !== undefined ? String(tcp.total_retrans) : '\u2013', 'retrans');
      const words = limitWords(r);
      cell(tr, words, 'lim', limitEvidence(r));
      tbody.appendChild(tr);
      verdicts[words] = (verdicts[words] || 0) + 1;
      if (tcp.rtt_ms !== undefined) rtts.push(tcp.rtt_ms);
      /* the kernel counts a connection's retransmissions from its start: its last record
       * holds them all */
      if (tcp.total_retrans !== undefined)
        byConn[r.remote] = Math.max(byConn[r.remote] || 0, tcp.total_retrans);
    }
    for (const k in byConn) retrans += byConn[k];
    $('transfers-n').textContent = String(recs.length);
    const span = serverSpan(recs);
    let text = 'This server sent you ' + fmtBytes(span.bytes) + ' in ' + recs.length + ' transfers at ' +
      fmt(span.mbps) + ' Mbit/s by its own clock; the round trip to you took ' + fmt(median(rtts)) +
      ' ms (median of its measurements), and it had to resend ' + retrans + ' segments on ' +
      Object.keys(byConn).length + ' connections.';
    if (missing) text += ' ' + missing + ' transfers had no record (evicted, or made from another address).';
    $('server-summary').textContent = text;
    $('server-summary').dataset.mbps = String(span.mbps);
    const top = Object.keys(verdicts).sort((a, b) => verdicts[b] - verdicts[a])[0];
    $('limit-summary').textContent = !recs.length ? 'No record to judge.'
      : top === 'not judged' ? 'What limited your download: not judged (this server does not say).'
      : 'What limited your download: ' + top + ' (' + verdicts[top] + ' of ' + recs.length + ' transfers).';
    return { span, rtt_ms: median(rtts), retrans, limit: top };
  }

  function showUploadRecords(recs, missing) {
    const span = serverSpan(recs);
    let text = 'This server received ' + fmtBytes(span.bytes) + ' in ' + recs.length + ' uploads at ' +
      fmt(span.mbps) + ' Mbit/s by its own clock.';
    if (missing) text += ' ' + missing + ' uploads had no record.';
    $('upload-summary').textContent = text;
    $('upload-summary').dataset.mbps = String(span.mbps);
    return { bytes: span.bytes, mbps: span.mbps };
  }

  function showUploads(up) {
    let bytes = 0, secs = 0;
    for (const a of up.server) { bytes += a.bytes || 0; secs += a.seconds || 0; }
    /* each stream's uploads follow one another: their server times over STREAMS streams */
    const rate = mbps(bytes, secs / STREAMS);
    $('upload-summary').textContent = 'This server received ' + fmtBytes(bytes) + ' in ' + up.server.length +
      ' uploads: ' + fmt(rate) + ' Mbit/s while a body was arriving, by its own clock (the gaps between one ' +
      'upload and the next not counted).';
    $('upload-summary').dataset.mbps = String(rate);
    return { bytes, mbps: rate };
  }

  async function run() {
    const btn = $('start');
    btn.disabled = true;
    const result = { streams: STREAMS, seconds: SECONDS, done: false };
    window.debitResult = result;
    try {
      if (!ep.downMax) throw new Error('this server has no test file to download');
      performance.setResourceTimingBufferSize(10000);
      setState('Measuring latency\u2026');
      const idle = [];
      await probe(); /* opens the connection: its handshake is not the line's delay */
      for (let i = 0; i < IDLE_PROBES; i++) { idle.push(await probe()); await sleep(50); }
      result.latency_idle_ms = median(idle);
      $('lat-idle').textContent = fmt(result.latency_idle_ms);
      $('lat-idle-detail').textContent = 'median of ' + idle.length + '; ' + fmt(Math.min(...idle)) + '\u2013' +
        fmt(Math.max(...idle)) + ' ms';

      const down = await phase('Downloading', downStream, 'down-mbps');
      result.download = { mbps: down.mbps, bytes: down.bytes, seconds: down.seconds, ids: down.ids, path: ep.downPath };
      result.latency_download_ms = median(down.probes);
      $('lat-down').textContent = fmt(result.latency_download_ms);
      $('down-detail').textContent = fmtBytes(down.bytes) + ' in ' + down.seconds.toFixed(1) + ' s, ' +
        down.requests + ' requests';

      let up = null;
      if (ep.upPath) {
        up = await phase('Uploading', upStream, 'up-mbps');
        result.upload = { mbps: up.mbps, bytes: up.bytes, seconds: up.seconds, ids: up.ids, path: ep.upPath };
        result.latency_upload_ms = median(up.probes);
        $('lat-up').textContent = fmt(result.latency_upload_ms);
        $('up-detail').textContent = fmtBytes(up.bytes) + ' in ' + up.seconds.toFixed(1) + ' s, ' +
          up.requests + ' requests';
      } else {
        $('up-detail').textContent = 'this server takes no uploads';
      }

      setState('Asking the server what it saw\u2026');
      const got = await records(down.ids);
      $('server-view').hidden = false;
      result.server = showRecords(got.recs, got.missing);
      if (up && up.ids.length) {
        const ups = await records(up.ids);
        result.server_upload = showUploadRecords(ups.recs, ups.missing);
      } else if (up) {
        result.server_upload = showUploads(up);
      }
      result.done = true;
      setState('Done.');
    } catch (e) {
      result.error = String(e && e.message ? e.message : e);
      setState('The test failed: ' + result.error);
    } finally {
      btn.disabled = false;
      btn.textContent = 'Run again';
    }
  }

  $('streams-n').textContent = String(STREAMS);
  $('start').addEventListener('click', run);
  if (params.get('autostart') === '1') run();
})();
