// Headless Chromium over the DevTools pipe (fd 3 and 4, no network port), for the
// browser tests' Node scripts (play_browser.js). Node's standard library only.
//
//   const { launch } = require("./cdp.js");
//   const browser = launch();                 // starts /usr/bin/chromium
//   const page = await browser.open(url);     // a new tab, attached
//   await page.evaluate("document.title");    // a value, awaited if a promise
//   await page.send("Input.dispatchMouseEvent", {...});
//   browser.on((msg) => ...);                 // every event: msg.method, params, sessionId
//   browser.close();                          // kills Chromium, removes its profile
"use strict";
const { spawn } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");

function launch() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "hus-chromium-"));
  const chrome = spawn("/usr/bin/chromium", [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    // A page in a background tab must keep running its timers and streams.
    "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
    "--remote-debugging-pipe", "--user-data-dir=" + profile, "about:blank",
  ], { stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"] });

  let nextId = 1;
  const waiting = new Map();
  const listeners = []; // functions given every event (method, params, sessionId)
  let buffer = Buffer.alloc(0);
  chrome.stdio[4].on("data", (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
    let end;
    while ((end = buffer.indexOf(0)) >= 0) {
      const msg = JSON.parse(buffer.subarray(0, end).toString("utf8"));
      buffer = buffer.subarray(end + 1);
      if (msg.id && waiting.has(msg.id)) {
        const { resolve, reject } = waiting.get(msg.id);
        waiting.delete(msg.id);
        if (msg.error) reject(new Error(JSON.stringify(msg.error)));
        else resolve(msg.result);
      } else if (msg.method) {
        for (const listener of listeners) listener(msg);
      }
    }
  });

  function send(method, params, sessionId) {
    const id = nextId++;
    const msg = { id, method, params: params || {} };
    if (sessionId) msg.sessionId = sessionId;
    chrome.stdio[3].write(JSON.stringify(msg) + "\0");
    return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
  }

  async function open(url) {
    const { targetId } = await send("Target.createTarget", { url: "about:blank" });
    const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
    const page = {
      targetId,
      sessionId,
      send: (method, params) => send(method, params, sessionId),
      evaluate: async (expression) => {
        const r = await send("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true }, sessionId);
        if (r.exceptionDetails) throw new Error(JSON.stringify(r.exceptionDetails));
        return r.result.value;
      },
      close: () => send("Target.closeTarget", { targetId }),
    };
    await page.send("Page.enable");
    await page.send("Emulation.setDeviceMetricsOverride", { width: 1280, height: 1000, deviceScaleFactor: 1, mobile: false });
    await page.send("Page.navigate", { url });
    return page;
  }

  function close() {
    chrome.kill("SIGKILL");
    try { fs.rmSync(profile, { recursive: true, force: true }); } catch (e) { /* left in tmp */ }
  }

  return { send, open, close, on: (listener) => listeners.push(listener) };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls `test` (an async function) every `every` ms until it returns something other
// than null or undefined; no time limit of its own (the caller's script has one).
async function until(test, every) {
  for (;;) {
    const value = await test();
    if (value !== null && value !== undefined) return value;
    await sleep(every || 20);
  }
}

module.exports = { launch, sleep, until };
