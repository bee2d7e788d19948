// Drives headless Chromium over the DevTools pipe (cdp.js) for the `hus serve` test of
// the live strip and the pages' links, with scripts on, at 1280 and 390 px wide:
//
// - the strip: on the dashboard (ORIGIN + "/"), once app.js has read /api/live, two
//   running sets and two finished ones are fed to its event handler (onEvent, as the
//   dashboard's stream would: `card` and `set-over` events), then 198 more finished
//   ones; the strip's height, the top of the page's content and the cards in their
//   order are taken after each burst;
// - the pages: ORIGIN + each PATH of argv[3..], loaded in turn: whether its text holds
//   the word `null`, how wide it is against the window, and the status of every link
//   on it to this server (each fetched once).
//
// Prints one JSON object. Node's standard library only.
"use strict";
const { launch, sleep, until } = require("./cdp.js");

const origin = process.argv[2];
const paths = process.argv.slice(3);
const LIMIT_MS = 90000;
const browser = launch();

function finish(code, out) {
  process.stdout.write(JSON.stringify(out) + "\n");
  browser.close();
  process.exit(code);
}

setTimeout(() => finish(1, { error: "not done within " + LIMIT_MS + " ms" }), LIMIT_MS);

// Synchronous from the first event to the last reading: no timer of app.js runs
// between (its 10 s re-read of /api/live would drop the made-up running sets).
const BURST = `(() => {
  const strip = () => {
    const section = document.getElementById("live-section");
    return {
      height: Math.round(section.getBoundingClientRect().height),
      view_top: Math.round(document.getElementById("view").getBoundingClientRect().top + window.scrollY),
      cards: Array.from(section.querySelectorAll(".live-set"), (c) => c.dataset.set + ":" + c.dataset.state),
      text_has_null: /\\bnull\\b/.test(section.innerText),
    };
  };
  const bots = ["strip-a", "strip-b"];
  const before = strip();
  let t = 1;
  // A card as the dashboard's stream sends it (a set before its first game), and a
  // set's end with its bots and score.
  const run = (set) => onEvent({ type: "card", set, bots, t: t++, announced: [null, null], game: 0,
    games_planned: 2, points: [0, 0], time: null, ply: 0, board: null, move: null, ms: [null, null],
    clocks: null, bot_of: [0, 1], over: null });
  const over = (set) => { run(set); onEvent({ type: "set-over", set, how: "finished", bots, points: [1, 1], t: t++ }); };
  run("strip-running-1");
  run("strip-running-2");
  for (let i = 1; i <= 2; i++) over("strip-done-" + i);
  const two = strip();
  for (let i = 3; i <= 200; i++) over("strip-done-" + i);
  const many = strip();
  return { before, two, many };
})()`;

// The links are fetched from the dashboard afterwards: a replay page's policy lets it
// fetch nothing.
// The live stream's page events applied in place (app.js onEvent): a result whose row
// is the first recent set's under a new name goes first in the recent sets, which keep
// their length; a standings event replaces a row and puts the rows in its order; a
// status event sets the line. No fetch of the page is needed for any of it.
const APPLY = `(() => {
  const recent = document.querySelector("#view table.sets[data-feed=all]");
  const rows = () => Array.from(recent.tBodies[0].rows, (r) => r.dataset.set);
  const before = rows();
  const first = recent.tBodies[0].rows[0];
  const row = first.outerHTML.split(first.dataset.set).join("r999-fed-vs-row");
  onEvent({ type: "result", set: "r999-fed-vs-row", number: 999, bots: ["a", "b"], winner: null, faulted: [], row });
  const after = rows();
  const table = document.querySelector("#view table.standings tbody");
  const order = Array.from(table.rows, (r) => r.dataset.bot).reverse();
  const last = table.rows[table.rows.length - 1];
  const changed = last.outerHTML.replace(/<td class="num points">[0-9]+</, '<td class="num points">4242<');
  onEvent({ type: "standings", rows: [{ bot: last.dataset.bot, row: changed }], order });
  const standings = Array.from(table.rows, (r) => r.dataset.bot);
  const points = table.querySelector("tr[data-bot='" + order[0] + "'] td.points").textContent;
  onEvent({ type: "status", line: "fed status line" });
  return { before, after, max: recent.dataset.max, order, standings, points,
           status: document.getElementById("status").textContent };
})()`;

const PAGE = `(() => {
  // Each address once, without its hash (a game of a replay, a live view).
  const links = Array.from(new Set(Array.from(document.querySelectorAll("a[href]"), (a) => a.href.split("#")[0])))
    .filter((h) => h.startsWith(location.origin + "/"))
    .map((h) => h.slice(location.origin.length));
  return {
    text_has_null: /\\bnull\\b/.test(document.body.innerText),
    window_width: window.innerWidth,
    page_width: document.documentElement.scrollWidth,
    title: document.title,
    links,
  };
})()`;

// The status of each of these paths, fetched once.
const FETCH = (paths) => `(async () => {
  const status = {};
  for (const p of ${JSON.stringify(paths)}) {
    try { status[p] = (await fetch(p)).status; } catch (e) { status[p] = String(e); }
  }
  return status;
})()`;

// What the script is doing, on stderr (shown when the test fails).
const step = (what) => process.stderr.write(new Date().toISOString() + " " + what + "\n");

// On a replay page: the position after 3 plies of game 1 (its label, the move the
// list marks), the game after the key n and then p, the server's links on top.
const REPLAY = `(async () => {
  const wait = async (test) => { for (let i = 0; i < 200 && !test(); i++) await new Promise((r) => setTimeout(r, 25)); };
  location.hash = "#game=1&ply=3";
  await wait(() => document.body.dataset.ply === "3");
  const current = document.querySelector("#moves li.current");
  const at3 = { ply: document.body.dataset.ply, label: document.getElementById("ply-label").textContent,
                current: current ? current.textContent.split(" ")[0] : null };
  const key = (k) => document.body.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true }));
  key("n");
  const after_n = document.body.dataset.game;
  key("p");
  const after_p = document.body.dataset.game;
  return { at3, after_n, after_p, nav: Array.from(document.querySelectorAll("nav.serve a"), (a) => a.textContent) };
})()`;

async function load(tab, url) {
  step("loading " + url);
  await tab.send("Page.navigate", { url });
  // (A replay page writes its game and ply in the address's hash.) An evaluation that
  // meets the document's end is asked again.
  const test = `location.href.split("#")[0] === ${JSON.stringify(url)} && document.readyState === "complete" || null`;
  await until(() => Promise.race([tab.evaluate(test).catch(() => null), sleep(2000).then(() => null)]), 50);
  step("loaded " + url);
}

async function main() {
  const out = {};
  for (const [width, height, mobile] of [[1280, 1000, false], [390, 844, true]]) {
    const tab = await browser.open("about:blank");
    await tab.send("Emulation.setDeviceMetricsOverride", { width, height, deviceScaleFactor: 1, mobile });
    await load(tab, origin + "/");
    await until(() => tab.evaluate(`typeof onEvent === "function" && liveRead || null`), 50);
    step("app.js read /api/live; the burst");
    const strip = await tab.evaluate(BURST);
    const applied = await tab.evaluate(APPLY);
    const pages = {};
    for (const path of paths) {
      await load(tab, origin + path);
      // app.js's first fetch of the page (it puts the page's <main> in place again).
      await sleep(300);
      step("reading " + path + " and fetching its links");
      pages[path] = await tab.evaluate(PAGE);
      if (path.endsWith("/replay")) pages[path].replay = await tab.evaluate(REPLAY);
    }
    step("fetching the links");
    await load(tab, origin + "/");
    const all = Array.from(new Set(Object.values(pages).flatMap((p) => p.links)));
    const status = await tab.evaluate(FETCH(all));
    for (const p of Object.values(pages)) p.links = Object.fromEntries(p.links.map((l) => [l, status[l]]));
    out[width] = { strip, applied, pages };
    await tab.close();
  }
  finish(0, out);
}

main().catch((e) => finish(1, { error: String(e.stack || e) }));
