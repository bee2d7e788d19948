// The screenshots of docs/server.md: `hus serve`'s dashboard, a bot's page and a set's
// live view, taken with headless Chromium over the DevTools pipe (tests/e2e/cdp.js).
//
//   node tests/bench/screenshots.js [HUS] [OUT_DIR]
//
// HUS is the binary (default target/debug/hus), OUT_DIR where the PNGs go (default
// docs/img: dashboard.png, bot.png, live.png). It plays a league of the sample bots
// (Python greedy and random, Node random) and a bot that takes 200 ms a move (so that a
// set is being played when the pictures are taken) in a temporary directory, on
// 127.0.0.1, waits until a few sets are done and a live game is under way, takes each
// picture once its page shows what it is for, stops the server and removes the
// directory. Each PNG must stay under 200 KB (it says so and exits 1 otherwise).
// Node's standard library only.
"use strict";
const { spawn } = require("child_process");
const fs = require("fs");
const http = require("http");
const os = require("os");
const path = require("path");
const { launch, sleep, until } = require("../e2e/cdp.js");

const root = path.resolve(__dirname, "../..");
const hus = path.resolve(process.argv[2] || path.join(root, "target/debug/hus"));
const out = path.resolve(process.argv[3] || path.join(root, "docs/img"));
const MAX_BYTES = 200 * 1024;
const LIMIT_MS = 300000;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hus-screenshots-"));
const league = `rules = "hus"
width = 8
games = 4
clock = "60s+1s"
ready_time = "30s"
seed = 7
concurrency = 2
openings = ${JSON.stringify(path.join(root, "openings/hus-8.txt"))}

[[bot]]
name = "greedy"
command = ${JSON.stringify("python3 " + path.join(root, "sample-bots/python/greedy_bot.py"))}

[[bot]]
name = "random"
command = ${JSON.stringify("python3 " + path.join(root, "sample-bots/python/random_bot.py"))}

[[bot]]
name = "random-js"
command = ${JSON.stringify("node " + path.join(root, "sample-bots/js/random_bot.js"))}

[[bot]]
name = "slow"
command = ${JSON.stringify("python3 " + path.join(root, "tests/bots/paced.py") + " 3 200 slow-random")}
`;
fs.writeFileSync(path.join(dir, "league.toml"), league);

let server = null;
let browser = null;
function finish(code, message) {
  if (message) process.stderr.write(message + "\n");
  if (browser) browser.close();
  if (server) server.kill("SIGTERM");
  const done = () => {
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(code);
  };
  if (server && server.exitCode === null) server.on("exit", done);
  else done();
}
setTimeout(() => finish(1, "screenshots: not done within " + LIMIT_MS / 1000 + " s"), LIMIT_MS);

function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, (r) => {
      let body = "";
      r.on("data", (c) => { body += c; });
      r.on("end", () => { try { resolve(JSON.parse(body)); } catch (e) { reject(e); } });
    }).on("error", reject);
  });
}

async function main() {
  server = spawn(hus, ["serve", path.join(dir, "league.toml"), "--dir", path.join(dir, "league"), "--listen", "127.0.0.1:0"],
    { stdio: ["ignore", "ignore", "pipe"] });
  const origin = await new Promise((resolve, reject) => {
    let text = "";
    server.stderr.on("data", (c) => {
      text += c;
      const m = /dashboard on (http:\/\/[^/\s]+)\//.exec(text);
      if (m) resolve(m[1]);
    });
    server.on("exit", (code) => reject(new Error("hus serve ended (" + code + "): " + text)));
  });
  // A running set some way into a game.
  const liveSet = () => until(async () => {
    const live = await get(origin + "/api/live");
    const s = live.sets.find((x) => x.game >= 1 && x.events.filter((e) => e.type === "move").length >= 12);
    return s ? s.set : null;
  }, 200);
  await until(async () => ((await get(origin + "/api/status")).sets_done >= 8 ? true : null), 200);
  await liveSet();

  browser = launch();
  const tab = await browser.open("about:blank");
  async function shoot(file, url, width, height, ready) {
    await tab.send("Emulation.setDeviceMetricsOverride", { width, height, deviceScaleFactor: 1, mobile: false });
    await tab.send("Page.navigate", { url });
    await until(() => tab.evaluate(ready).then((ok) => (ok ? true : null)), 100);
    await sleep(300); // the last frame painted
    const shot = await tab.send("Page.captureScreenshot", { format: "png" });
    const bytes = Buffer.from(shot.data, "base64");
    fs.writeFileSync(path.join(out, file), bytes);
    process.stdout.write(path.join(out, file) + ": " + width + "x" + height + ", " + bytes.length + " bytes\n");
    if (bytes.length > MAX_BYTES) finish(1, file + " is over " + MAX_BYTES + " bytes");
  }
  fs.mkdirSync(out, { recursive: true });
  await shoot("dashboard.png", origin + "/", 1100, 900,
    "document.querySelectorAll('table.standings tr[data-bot]').length === 4 && document.querySelector('.live-set svg .pit') !== null");
  await shoot("bot.png", origin + "/bots/greedy", 1100, 800,
    "(document.querySelector('#view h2') || {}).textContent === 'greedy' && document.querySelector('#view tr[data-set]') !== null");
  await shoot("live.png", origin + "/#/live/" + encodeURIComponent(await liveSet()), 900, 860,
    "document.querySelector('#live-focus svg.live-board .pit') !== null");
  finish(0);
}

main().catch((e) => finish(1, "screenshots: " + String(e.stack || e)));
