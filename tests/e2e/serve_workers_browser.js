// Drives headless Chromium over the DevTools pipe (cdp.js) for the `hus serve --store`
// test: loads the dashboard at argv[2], waits for its Workers table and prints one JSON
// object with its rows (each cell's text) and whether any markup of a worker's name
// became an element or ran. argv[3], when given, names other rows to wait for (a CSS
// selector: `tr[data-set]` for the recent sets, `.live-set.elsewhere` for the workers'
// live sets, whose "rows" are the texts of each card's children). Node's standard
// library only.
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
      rows: Array.from(document.querySelectorAll(${JSON.stringify(rows)}))
        .map((r) => Array.from(r.cells || r.children).map((c) => c.textContent)),
      live_empty_hidden: (document.getElementById('live-empty') || {}).hidden === true,
      bold: document.querySelectorAll('#view b, #live b').length,
      images: document.querySelectorAll('#view img, #live img').length,
      pwned: window.pwned === undefined ? null : window.pwned })`);
    if (seen.rows.length > 0) finish(0, seen);
    await sleep(200);
  }
}

main().catch((e) => finish(1, { error: String(e.stack || e) }));
