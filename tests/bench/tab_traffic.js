// What an idle dashboard tab costs while a league of instant bots runs: the bytes each
// tab receives per minute, its fetches per minute, and the CPU the server uses, with
// TABS tabs open on `/` in headless Chromium (over the DevTools pipe, tests/e2e/cdp.js).
//
//   node tests/bench/tab_traffic.js [--light] [HUS] [TABS] [SECONDS] [PAGE]
//
// HUS is the binary (default target/debug/hus), TABS the tabs (default 1), SECONDS the
// measured time (default 60), after 10 s for the tabs to load; PAGE the page the tabs
// open (default `/`; `/bots/r1` a bot's page). The league: four
// `hus random-bot`s, 2 games a set, 2 sets at a time, in a temporary directory on
// 127.0.0.1 (removed after). Bytes are the bodies Chromium received (Network.dataReceived's
// encodedDataLength: pages, API answers and the live stream); the server's CPU is its
// user and system time over the measured time (/proc/PID/stat), in per cent of one
// core. The bytes are also split by kind: the live stream (`stream`: moves, results,
// standings rows), pages fetched again (`pages`: documents and the HTML app.js fetches)
// and the rest (`api`: /api/status, /api/live). Prints one JSON line. Node's standard
// library only.
//
// With --light the tabs are not Chromium's but light clients in this process, each
// making the requests an idle tab's app.js makes (the same for this branch's script
// and the one before it): the page and its three files once, the live stream
// (/api/live/events, read to its end), /api/live at once and every 10 s, /api/status
// at once and every 60 s, and the page again (as HTML) at most once a minute after a
// `result` event came on the stream. Its bytes are the bodies received (Node's http,
// after the chunked coding), counted the same way by kind. Fifty Chromium tabs are
// more than a 2-core machine renders when each takes every move; the light clients
// cost little, so the server's CPU is what the figure measures. Each light tab comes
// from an address of its own (127.0.1.N): one address may hold 16 live streams. It
// also says the server's CPU time per finished set (the league's own work is most of
// it: TABS 0 measures that alone).
"use strict";
const { spawn } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");
const http = require("http");
const { launch, sleep } = require("../e2e/cdp.js");

const root = path.resolve(__dirname, "../..");
const argv = process.argv.slice(2);
const LIGHT = argv[0] === "--light";
if (LIGHT) argv.shift();
const hus = path.resolve(argv[0] || path.join(root, "target/debug/hus"));
const TABS = Number(argv[1] || 1);
const SECONDS = Number(argv[2] || 60);
const PAGE = argv[3] || "/";
const WARM_MS = 10000;
const LIMIT_MS = WARM_MS + SECONDS * 1000 + TABS * 10000 + 120000;
const TICKS = 100; // clock ticks per second of /proc/PID/stat (getconf CLK_TCK)

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hus-traffic-"));
let league = `rules = "hus"\nwidth = 8\ngames = 2\nmove_time = "10s"\nready_time = "30s"\nseed = 7\nconcurrency = 2\n`;
for (const n of [1, 2, 3, 4]) league += `\n[[bot]]\nname = "r${n}"\ncommand = ${JSON.stringify(hus + " random-bot --seed " + n)}\n`;
fs.writeFileSync(path.join(dir, "league.toml"), league);

let server = null;
let browser = null;
const lightTabs = [];
function finish(code, message) {
  if (message) process.stderr.write(message + "\n");
  if (browser) browser.close();
  for (const t of lightTabs) t.close();
  if (server) server.kill("SIGTERM");
  const done = () => { fs.rmSync(dir, { recursive: true, force: true }); process.exit(code); };
  if (server && server.exitCode === null) server.on("exit", done);
  else done();
}
setTimeout(() => finish(1, "tab_traffic: not done within " + LIMIT_MS / 1000 + " s"), LIMIT_MS);

function cpuTicks(pid) {
  const stat = fs.readFileSync("/proc/" + pid + "/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]); // utime, stime
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
  if (LIGHT) return light(origin);
  browser = launch();
  const bytes = new Map(); // sessionId -> bytes received while measuring
  const fetches = new Map(); // sessionId -> requests sent while measuring
  const kinds = new Map(); // requestId -> stream, pages or api
  const byKind = { stream: 0, pages: 0, api: 0 };
  let measuring = false;
  browser.on((msg) => {
    if (!msg.sessionId) return;
    if (msg.method === "Network.requestWillBeSent") {
      const url = msg.params.request.url;
      kinds.set(msg.params.requestId, url.includes("/api/live/events") ? "stream" : url.includes("/api/") ? "api" : "pages");
      if (measuring) fetches.set(msg.sessionId, (fetches.get(msg.sessionId) || 0) + 1);
    } else if (measuring && msg.method === "Network.dataReceived") {
      const n = msg.params.encodedDataLength || msg.params.dataLength || 0;
      bytes.set(msg.sessionId, (bytes.get(msg.sessionId) || 0) + n);
      byKind[kinds.get(msg.params.requestId) || "pages"] += n;
    }
  });
  const tabs = [];
  for (let i = 0; i < TABS; i++) {
    const tab = await browser.open("about:blank");
    await tab.send("Network.enable");
    await tab.send("Page.navigate", { url: origin + PAGE });
    tabs.push(tab);
  }
  await sleep(WARM_MS);
  const before = { ticks: cpuTicks(server.pid), at: Date.now(), sets: await setsDone(tabs[0]) };
  measuring = true;
  await sleep(SECONDS * 1000);
  measuring = false;
  const after = { ticks: cpuTicks(server.pid), at: Date.now(), sets: await setsDone(tabs[0]) };
  const minutes = (after.at - before.at) / 60000;
  const perTab = tabs.map((t) => bytes.get(t.sessionId) || 0);
  const fetchesPerTab = tabs.map((t) => fetches.get(t.sessionId) || 0);
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  process.stdout.write(JSON.stringify({
    hus, client: "chromium", tabs: TABS, seconds: SECONDS, page: PAGE,
    sets_finished_per_minute: Math.round((after.sets - before.sets) / minutes),
    bytes_per_tab_per_minute: Math.round(mean(perTab) / minutes),
    fetches_per_tab_per_minute: Math.round(mean(fetchesPerTab) / minutes),
    bytes_per_tab_per_minute_by_kind: Object.fromEntries(Object.entries(byKind).map(([k, n]) => [k, Math.round(n / TABS / minutes)])),
    server_cpu_percent_of_a_core: Math.round(((after.ticks - before.ticks) / TICKS) / (minutes * 60) * 1000) / 10,
  }) + "\n");
  finish(0);
}

// One light tab: the requests of an idle tab's app.js (the header says which), its
// bytes counted by kind while `counting()` says so.
function lightTab(origin, counting, byKind, n) {
  // Each tab from an address of its own (127.0.1.N), as tabs of many people: one
  // address may hold 16 live streams (--max-live-per-address).
  const agent = new http.Agent({ keepAlive: true, maxSockets: 6, localAddress: "127.0.1." + (1 + (n % 250)) });
  const tab = { bytes: 0, fetches: 0, timers: [], requests: new Set(), closed: false };
  const count = (kind, n) => {
    if (!counting()) return;
    tab.bytes += n;
    byKind[kind] += n;
  };
  let resultAt = 0; // when a result came on the stream
  let pageAt = Date.now(); // when the page was last fetched
  function get(p, kind, accept, onData) {
    if (tab.closed) return;
    if (counting()) tab.fetches++;
    const req = http.get(origin + p, { agent, headers: { Accept: accept } }, (res) => {
      res.on("data", (chunk) => { count(kind, chunk.length); if (onData) onData(chunk); });
      res.on("end", () => tab.requests.delete(req));
    });
    req.on("error", () => tab.requests.delete(req));
    tab.requests.add(req);
  }
  for (const p of [PAGE, "/app.js", "/app.css", "/board.js"]) get(p, "pages", "*/*");
  let tail = "";
  get("/api/live/events", "stream", "text/event-stream", (chunk) => {
    const text = tail + chunk.toString("latin1");
    if (text.includes('"type":"result"')) resultAt = Date.now();
    tail = text.slice(-32);
  });
  get("/api/live", "api", "application/json");
  get("/api/status", "api", "application/json");
  tab.timers.push(setInterval(() => get("/api/live", "api", "application/json"), 10000));
  tab.timers.push(setInterval(() => get("/api/status", "api", "application/json"), 60000));
  tab.timers.push(setInterval(() => {
    if (resultAt > pageAt && Date.now() - pageAt >= 60000) {
      pageAt = Date.now();
      get(PAGE, "pages", "text/html");
    }
  }, 1000));
  tab.close = () => {
    tab.closed = true;
    for (const t of tab.timers) clearInterval(t);
    for (const r of tab.requests) r.destroy();
    agent.destroy();
  };
  return tab;
}

async function light(origin) {
  const byKind = { stream: 0, pages: 0, api: 0 };
  let measuring = false;
  for (let i = 0; i < TABS; i++) lightTabs.push(lightTab(origin, () => measuring, byKind, i));
  await sleep(WARM_MS);
  const status = () => new Promise((resolve, reject) => {
    http.get(origin + "/api/status", (res) => {
      let body = "";
      res.on("data", (c) => { body += c; });
      res.on("end", () => { try { resolve(JSON.parse(body)); } catch (e) { reject(e); } });
    }).on("error", reject);
  });
  const first = await status();
  const before = { ticks: cpuTicks(server.pid), at: Date.now(), sets: first.sets_done };
  measuring = true;
  await sleep(SECONDS * 1000);
  measuring = false;
  const last = await status();
  const after = { ticks: cpuTicks(server.pid), at: Date.now(), sets: last.sets_done };
  const minutes = (after.at - before.at) / 60000;
  const mean = (xs) => xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
  const cpuSeconds = (after.ticks - before.ticks) / TICKS;
  process.stdout.write(JSON.stringify({
    hus, client: "light", tabs: TABS, seconds: SECONDS, page: PAGE, watchers: last.watchers,
    sets_finished_per_minute: Math.round((after.sets - before.sets) / minutes),
    bytes_per_tab_per_minute: Math.round(mean(lightTabs.map((t) => t.bytes)) / minutes),
    fetches_per_tab_per_minute: Math.round(mean(lightTabs.map((t) => t.fetches)) / minutes),
    bytes_per_tab_per_minute_by_kind: Object.fromEntries(Object.entries(byKind).map(([k, n]) => [k, Math.round(n / TABS / minutes)])),
    server_cpu_percent_of_a_core: Math.round(cpuSeconds / (minutes * 60) * 1000) / 10,
    server_cpu_ms_per_set: Math.round(cpuSeconds * 1000 / Math.max(1, after.sets - before.sets) * 10) / 10,
  }) + "\n");
  finish(0);
}

async function setsDone(tab) {
  return tab.evaluate(`fetch("/api/status").then((r) => r.json()).then((s) => s.sets_done)`);
}

main().catch((e) => finish(1, "tab_traffic: " + String(e.stack || e)));
