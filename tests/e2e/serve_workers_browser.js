// Drives headless Chromium over the DevTools pipe (cdp.js) for the `hus serve --store`
// test: loads the dashboard at argv[2], waits for its Workers table and prints one JSON
// object with its rows (each cell's text) and whether any markup of a worker's name
// became an element or ran. argv[3], when given, names other rows to wait for (a CSS
// selector: `tr[data-set]` for the recent sets). Node's standard library only.
"use strict";
const { launch, sleep } = require("./cdp.js");

const url = process.argv[2];
const rows = process.argv[3] || "tr[data-worker]";
const LIMIT_MS = 60000;
const browser = launch();

function finish(code, out) {
  process.stdout.write(JSON.stringify(out) + "\n");
  browser.close();
  process.exit(code);
}

setTimeout(() => finish(1, { error: "no " + rows + " within " + LIMIT_MS + " ms" }), LIMIT_MS);

async function main() {
  const tab = await browser.open(url);
  for (;;) {
    const seen = await tab.evaluate(`({
      rows: Array.from(document.querySelectorAll(${JSON.stringify(rows)})).map((r) => Array.from(r.cells).map((c) => c.textContent)),
      bold: document.querySelectorAll('#view b').length,
      images: document.querySelectorAll('#view img').length,
      pwned: window.pwned === undefined ? null : window.pwned })`);
    if (seen.rows.length > 0) finish(0, seen);
    await sleep(200);
  }
}

main().catch((e) => finish(1, { error: String(e.stack || e) }));
