// Drives headless Chromium over the DevTools pipe (cdp.js) for the `hus serve` test of
// the pages rendered on the server: with the page's scripts disabled
// (Emulation.setScriptExecutionDisabled), loads ORIGIN + each PATH of argv[3..] in turn
// and prints one JSON object, by path, with what the page holds: the standings rows,
// the cross-table's cells, the text of the view, its code and stderr blocks, and
// whether any script ran or any markup of bot-supplied text became an element. Node's
// standard library only.
"use strict";
const { launch, sleep } = require("./cdp.js");

const origin = process.argv[2];
const paths = process.argv.slice(3);
const LIMIT_MS = 60000;
const browser = launch();

function finish(code, out) {
  process.stdout.write(JSON.stringify(out) + "\n");
  browser.close();
  process.exit(code);
}

setTimeout(() => finish(1, { error: "pages not loaded within " + LIMIT_MS + " ms" }), LIMIT_MS);

const READ = `(() => {
  const text = (n) => n.textContent;
  const all = (sel) => Array.from(document.querySelectorAll(sel));
  return {
    href: location.href,
    ready: document.readyState,
    // app.js defines route(), board.js HusBoard: neither may have run.
    scripted: typeof route !== "undefined" || typeof HusBoard !== "undefined",
    status: (document.getElementById("status") || {}).textContent || null,
    live_cards: document.querySelectorAll("#live > *").length,
    title: (document.querySelector("#view h2") || {}).textContent || null,
    standings: all("table.standings tbody tr").map((r) => ({ bot: r.dataset.bot, cells: Array.from(r.cells, text) })),
    cross_head: all("table.cross thead th").map(text),
    cross: all("table.cross tbody tr").map((r) => ({
      bot: r.dataset.bot,
      cells: Array.from(r.querySelectorAll("td"), (c) => ({
        vs: c.dataset.vs, text: c.textContent, class: c.className,
        href: (c.querySelector("a") || {}).href || null,
        label: (c.querySelector("a") || { getAttribute: () => null }).getAttribute("aria-label"),
      })),
    })),
    sets: all("table.sets tbody tr").map((r) => r.dataset.set),
    code: all("#view code").map(text),
    stderr: all("#view pre.stderr").map(text),
    faults: all("#view section.faulted li").map(text),
    // Each chart: its label, and per series (path.line) how many points it was drawn
    // through; the legend's names as text.
    charts: all("#view figure.chart").map((f) => ({
      label: f.getAttribute("aria-label"),
      lines: Array.from(f.querySelectorAll("path.line"), (p) => Number(p.getAttribute("data-points"))),
      legend: Array.from(f.querySelectorAll("ul.legend li"), text),
    })),
    opponents: all("#view table.opponents tbody tr").map((r) => r.dataset.opponent),
    // A bot page's rank, and each opponent's difference and likelihood as written.
    rank: (document.querySelector("#view .rank") || { dataset: {} }).dataset.rank || null,
    opponent_fit: all("#view table.opponents tbody tr").map((r) => ({
      opponent: r.dataset.opponent,
      value: (r.querySelector("td.difference") || { dataset: {} }).dataset.value || null,
      los: (r.querySelector("td.los") || { dataset: {} }).dataset.los || null,
    })),
    // The head-to-head page's answer: the difference, its interval, the likelihood.
    pair: document.querySelector("#view dl.pair-figures") && {
      score: (document.querySelector("#view dd.score") || {}).textContent || null,
      value: (document.querySelector("#view dd.difference") || { dataset: {} }).dataset.value || null,
      low: (document.querySelector("#view dd.difference") || { dataset: {} }).dataset.low || null,
      high: (document.querySelector("#view dd.difference") || { dataset: {} }).dataset.high || null,
      los: (document.querySelector("#view dd.los") || { dataset: {} }).dataset.los || null,
      los_text: (document.querySelector("#view dd.los") || {}).textContent || null,
    },
    view: (document.getElementById("view") || {}).textContent || null,
    viewport: (document.querySelector('meta[name="viewport"]') || { content: null }).content,
    scrollers: all("#view div.scroll").length,
    tables: all("#view table").length,
    elements_from_text: document.querySelectorAll("#view b, #view img, #view script, #live b").length,
    pwned: window.pwned === undefined ? null : window.pwned,
  };
})()`;

async function main() {
  const tab = await browser.open("about:blank");
  await tab.send("Emulation.setScriptExecutionDisabled", { value: true });
  const out = {};
  for (const path of paths) {
    const url = origin + path;
    await tab.send("Page.navigate", { url });
    let seen = null;
    for (;;) {
      seen = await tab.evaluate(READ);
      if (seen.href === url && seen.ready === "complete") break;
      await sleep(50);
    }
    out[path] = seen;
  }
  // On a phone's width (360 px) the standings page does not grow sideways: its tables
  // scroll in their boxes. Then the keyboard: the first Tab reaches the skip link, with
  // a visible outline; further Tabs reach the table's box and the links.
  // A tab of its own, on the phone's width from the start.
  await tab.close();
  const phoneTab = await browser.open("about:blank");
  await phoneTab.send("Emulation.setScriptExecutionDisabled", { value: true });
  await phoneTab.send("Emulation.setDeviceMetricsOverride", { width: 360, height: 740, deviceScaleFactor: 2, mobile: true });
  await phoneTab.send("Page.navigate", { url: origin + "/" });
  for (;;) {
    const ready = await phoneTab.evaluate(`location.href === ${JSON.stringify(origin + "/")} && document.readyState === "complete"`);
    if (ready) break;
    await sleep(50);
  }
  const phone = await phoneTab.evaluate(`({
    viewport_width: window.innerWidth,
    // Elements past the phone's 360 px, outside a scrolling box (none should be).
    wider: Array.from(document.querySelectorAll("body *"))
      .filter((e) => !e.closest("div.scroll") && e.getBoundingClientRect().right > 360)
      .slice(0, 5).map((e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className ? "." + e.className : "") + " " + Math.round(e.getBoundingClientRect().right)),
    page_width: document.documentElement.scrollWidth,
    boxes: Array.from(document.querySelectorAll("#view div.scroll"), (d) => ({
      label: d.getAttribute("aria-label"), scrolls: d.scrollWidth > d.clientWidth, fits: d.getBoundingClientRect().right <= window.innerWidth })),
  })`);
  const focused = [];
  for (let i = 0; i < 7; i++) {
    for (const type of ["keyDown", "keyUp"]) {
      await phoneTab.send("Input.dispatchKeyEvent", { type, key: "Tab", code: "Tab", windowsVirtualKeyCode: 9 });
    }
    focused.push(await phoneTab.evaluate(`(() => {
      const a = document.activeElement;
      const style = getComputedStyle(a);
      return { tag: a.tagName.toLowerCase(), class: a.className, label: a.getAttribute("aria-label"), text: a.textContent.slice(0, 40),
               outline: style.outlineStyle + " " + style.outlineWidth };
    })()`));
  }
  out.phone = phone;
  out.focused = focused;
  finish(0, out);
}

main().catch((e) => finish(1, { error: String(e.stack || e) }));
