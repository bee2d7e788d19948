// Drives headless Chromium over the DevTools pipe (cdp.js) for
// the `hus serve` browser test: loads the dashboard at argv[2], follows the first live
// set's game ply by ply until its card says the set finished, opens the set's page and
// then its replay, and prints one JSON object with what it saw (the seeds as shown).
// Node's standard library only.
"use strict";
const { launch, sleep } = require("./cdp.js");

const url = process.argv[2];
const LIMIT_MS = 120000;
const browser = launch();

function finish(code, out) {
  process.stdout.write(JSON.stringify(out) + "\n");
  browser.close();
  process.exit(code);
}

setTimeout(() => finish(1, { error: "no result within " + LIMIT_MS + " ms" }), LIMIT_MS);

async function main() {
  const tab = await browser.open(url);
  const evaluate = tab.evaluate;
  const send = tab.send;

  // The first set that starts after the page is up (one already running may be near
  // its end); then its ply, polled, until its card says the set finished.
  await sleep(500);
  const old = new Set(await evaluate(`Array.from(document.querySelectorAll('.live-set')).map((c) => c.dataset.set)`));
  let set = null;
  const plies = [];
  let state = null;
  let announced = null;
  const started = Date.now();
  while (Date.now() - started < LIMIT_MS - 20000) {
    const seen = await evaluate(`(() => {
      const old = new Set(${JSON.stringify([...old])});
      const card = Array.from(document.querySelectorAll('.live-set'))
        .find((c) => ${set ? "c.dataset.set === " + JSON.stringify(set) : "!old.has(c.dataset.set)"});
      if (!card) return null;
      const ply = card.querySelector('.live-ply');
      const game = card.querySelector('.live-game');
      const a = Array.from(card.querySelectorAll('.announced')).map((x) => x.textContent).join(' | ');
      return { set: card.dataset.set, state: card.dataset.state,
               ply: ply && game ? Number(game.textContent) * 1000 + Number(ply.textContent) : null,
               announced: a || null };
    })()`);
    if (seen) {
      set = seen.set;
      if (seen.announced) announced = seen.announced;
      // Game * 1000 + ply: in order over the set's games.
      if (seen.ply !== null && seen.ply % 1000 > 0 && plies[plies.length - 1] !== seen.ply) plies.push(seen.ply);
      if (seen.state !== "playing") { state = seen.state; break; }
    }
    await sleep(25);
  }
  const page = await evaluate(`({ pwned: window.pwned === undefined ? null : window.pwned,
    bold: document.querySelectorAll('#live b, #view b').length,
    replayLink: (document.querySelector('.live-set[data-set="${set}"] a.replay') || {}).href || null })`);
  if (!set || !page.replayLink) finish(1, { error: "no finished live set", set, plies, state });

  // The set's page on the dashboard: the seed it shows (a string: a JavaScript number
  // would keep 53 of its 64 bits).
  await evaluate(`location.hash = ${JSON.stringify("#/set/" + set)}`);
  let dashboardSeed = null;
  for (let i = 0; i < 200 && dashboardSeed === null; i++) {
    await sleep(50);
    dashboardSeed = await evaluate(`(() => {
      const h = document.querySelector('#view h2');
      if (!h || h.textContent !== ${JSON.stringify(set)}) return null;
      const m = /\u00b7 seed ([^ ]+) \u00b7/.exec(document.getElementById('view').textContent);
      return m ? m[1] : null;
    })()`);
  }

  await send("Page.navigate", { url: page.replayLink });
  let replay = null;
  for (let i = 0; i < 200 && !replay; i++) {
    await sleep(50);
    replay = await evaluate(`(() => {
      const data = document.getElementById('hus-data');
      if (!data || !document.getElementById('board') || !document.getElementById('board').childElementCount) return null;
      const d = JSON.parse(data.textContent);
      const seed = /\u00b7 seed ([^ ]+) \u00b7/.exec(document.getElementById('set-line').textContent);
      return { status: d.status, moves: d.games.reduce((n, g) => n + g.pits.length, 0),
               seed: seed ? seed[1] : null,
               check_error_hidden: document.getElementById('check-error').hidden,
               pwned: window.pwned === undefined ? null : window.pwned };
    })()`);
  }
  finish(0, { set, state, plies_seen: plies, announced, pwned: page.pwned, bold_elements: page.bold,
    dashboard_seed: dashboardSeed, replay });
}

main().catch((e) => finish(1, { error: String(e.stack || e) }));
