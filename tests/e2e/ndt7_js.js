// M-Lab's own ndt7 download and upload workers (npm @m-lab/ndt7, src/ndt7-*-worker.js), run
// in Node with its WebSocket (undici; node --experimental-websocket) instead of a browser's
// Web Worker: the worker's onmessage gets the URL as ndt7.js would post it, and every
// postMessage of the worker is printed as one JSON line. For tests/e2e/server_ndt7.sh.
//   node --experimental-websocket ndt7_js.js WORKER.js download|upload URL
'use strict';
const fs = require('fs');
const [worker, test, url] = process.argv.slice(2);
const self = {};
globalThis.self = self;
globalThis.postMessage = (m) => {
  process.stdout.write(JSON.stringify(m) + '\n');
  if (m.MsgType === 'complete' || m.MsgType === 'error') setTimeout(() => process.exit(0), 100);
};
// the worker file is a script for a Worker's global scope: run it as one
new Function('self', 'postMessage', fs.readFileSync(worker, 'utf8'))(self, globalThis.postMessage);
self.onmessage({data: {['///ndt/v7/' + test]: url}});
setTimeout(() => { process.stdout.write('{"MsgType":"timeout"}\n'); process.exit(1); }, 20000);
