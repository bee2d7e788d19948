// The dashboard's charts as a reader sees them, in headless Chromium (over the DevTools
// pipe, cdp.js), at 1280 and 390 px: each chart of each page given has two axis titles
// (the y one with its unit in brackets), whole set numbers on its x axis, tick labels
// inside its box, a legend when it draws several series, and every point a dot with its
// value in a <title>; a series of a single point is a dot that shows (not an invisible
// path of one point). Prints one JSON report: per width and page, per chart.
//
//   node tests/e2e/serve_charts_browser.js ORIGIN PATH...
"use strict";
const { launch, sleep, until } = require("./cdp.js");

const origin = process.argv[2];
const paths = process.argv.slice(3);
const LIMIT_MS = 60000;
const browser = launch();

function finish(code, out) {
  process.stdout.write(JSON.stringify(out) + "\n");
  browser.close();
  process.exit(code);
}

setTimeout(() => finish(1, { error: "not done within " + LIMIT_MS + " ms" }), LIMIT_MS);

const CHARTS = `(() => Array.from(document.querySelectorAll("#view figure.chart"), (figure) => {
  const svg = figure.querySelector("svg");
  const box = svg.getBoundingClientRect();
  const titles = Array.from(svg.querySelectorAll("text.axis-title"), (t) => t.textContent);
  const ticks = Array.from(svg.querySelectorAll("text.tick"), (t) => ({
    text: t.textContent,
    x: t.getAttribute("text-anchor") === "middle",
    inside: (() => { const r = t.getBoundingClientRect(); return r.left >= box.left - 1 && r.right <= box.right + 1 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1; })(),
  }));
  const lines = Array.from(svg.querySelectorAll("path.line"), (p) => Number(p.dataset.points));
  const dots = Array.from(svg.querySelectorAll("circle.dot"), (c) => {
    const r = c.getBoundingClientRect();
    const style = getComputedStyle(c);
    return {
      single: c.classList.contains("single"),
      seen: r.width > 0 && r.height > 0 && style.visibility !== "hidden" && style.display !== "none" && Number(style.fillOpacity) > 0,
      title: (c.querySelector("title") || { textContent: "" }).textContent,
    };
  });
  return {
    label: figure.getAttribute("aria-label"),
    class: svg.getAttribute("class"),
    width: Math.round(box.width),
    window: window.innerWidth,
    titles,
    x_ticks: ticks.filter((t) => t.x).map((t) => t.text),
    y_ticks: ticks.filter((t) => !t.x).map((t) => t.text),
    ticks_inside: ticks.every((t) => t.inside),
    lines,
    dots,
    legend: Array.from(figure.querySelectorAll("ul.legend li"), (li) => li.textContent),
  };
}))()`;

const step = (what) => process.stderr.write(new Date().toISOString() + " " + what + "\n");

async function load(tab, url) {
  step("loading " + url);
  await tab.send("Page.navigate", { url });
  const test = `location.href.split("#")[0] === ${JSON.stringify(url)} && document.readyState === "complete" || null`;
  await until(() => Promise.race([tab.evaluate(test).catch(() => null), sleep(2000).then(() => null)]), 50);
}

async function main() {
  const out = {};
  for (const [width, height, mobile] of [[1280, 1000, false], [390, 844, true]]) {
    const tab = await browser.open("about:blank");
    await tab.send("Emulation.setDeviceMetricsOverride", { width, height, deviceScaleFactor: 1, mobile });
    const pages = {};
    for (const path of paths) {
      await load(tab, origin + path);
      await sleep(200);
      pages[path] = await tab.evaluate(CHARTS);
    }
    out[width] = pages;
    await tab.close();
  }
  finish(0, out);
}

main().catch((e) => finish(1, { error: String(e.stack || e) }));
