#!/usr/bin/env node
// Renders each HTML report in a real browser (Debian's chromium-headless-shell, or chromium)
// and fails if a page
//   - makes any network request (everything must be inline: file: and data: only),
//   - logs a console error or warning, or throws,
//   - holds a <script>, an external stylesheet, font or image,
//   - draws two text labels of one plot on top of each other (tick labels, legends, titles),
//   - draws a plot whose SVG is empty or wider than the page.
// A full-page PNG of each page is written beside the HTML (`<name>.png`): the CI artifacts.
//
// Usage: node scripts/browser-check.js REPORT.html...
// Talks to the browser over the DevTools protocol on a pipe (--remote-debugging-pipe: fds 3
// and 4, NUL-separated JSON), so it needs nothing but node and the browser.
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node scripts/browser-check.js REPORT.html...');
  process.exit(2);
}

function findBrowser() {
  const candidates = [
    process.env.GIGAGAS_CHROMIUM,
    '/usr/bin/chromium-headless-shell',
    '/usr/lib/chromium/chromium-headless-shell',
    '/usr/bin/chromium',
  ].filter(Boolean);
  return candidates.find((p) => fs.existsSync(p));
}

const browser = findBrowser();
if (!browser) {
  console.error('browser-check: no chromium found (apt-get install chromium-headless-shell, or set GIGAGAS_CHROMIUM)');
  process.exit(3);
}

const profile = fs.mkdtempSync(path.join(require('os').tmpdir(), 'gigagas-browser-'));
const args = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--remote-debugging-pipe',
  `--user-data-dir=${profile}`,
  // Any request that escapes the page fails fast instead of reaching a network.
  '--proxy-server=127.0.0.1:9',
  '--host-resolver-rules=MAP * ~NOTFOUND',
  'about:blank',
];
const child = spawn(browser, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let stderr = '';
child.stderr.on('data', (d) => {
  stderr += d.toString();
  if (stderr.length > 20000) stderr = stderr.slice(-20000);
});

const toBrowser = child.stdio[3];
const fromBrowser = child.stdio[4];
let nextId = 1;
const pending = new Map();
const listeners = [];
let buffer = Buffer.alloc(0);
fromBrowser.on('data', (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  let end;
  while ((end = buffer.indexOf(0)) >= 0) {
    const msg = JSON.parse(buffer.subarray(0, end).toString());
    buffer = buffer.subarray(end + 1);
    if (msg.id && pending.has(msg.id)) {
      const { resolve, reject, method } = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) reject(new Error(`${method}: ${JSON.stringify(msg.error)}`));
      else resolve(msg.result);
    } else if (msg.method) {
      for (const l of listeners) l(msg);
    }
  }
});

function send(method, params = {}, sessionId) {
  const id = nextId++;
  const msg = { id, method, params };
  if (sessionId) msg.sessionId = sessionId;
  toBrowser.write(JSON.stringify(msg) + '\0');
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
}

function waitFor(predicate, ms, what) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
    listeners.push((msg) => {
      if (predicate(msg)) {
        clearTimeout(timer);
        resolve(msg);
      }
    });
  });
}

// Runs in the page: what a reader would see wrong.
const pageChecks = `(() => {
  const problems = [];
  for (const el of document.querySelectorAll('script, link, iframe, object, embed, img[src], image'))
    problems.push('forbidden element <' + el.tagName.toLowerCase() + '> (the report must be self-contained, without script)');
  const width = document.documentElement.clientWidth;
  const svgs = [...document.querySelectorAll('svg')];
  svgs.forEach((svg, k) => {
    const name = 'plot ' + (k + 1) + ' (' + ((svg.querySelector('text') || {}).textContent || 'untitled').trim().slice(0, 60) + ')';
    const box = svg.getBoundingClientRect();
    if (box.width < 50 || box.height < 50) problems.push(name + ': empty or tiny (' + box.width + 'x' + box.height + ')');
    if (box.right > width + 1) problems.push(name + ': wider than the page (' + Math.round(box.right) + ' > ' + width + ')');
    const texts = [...svg.querySelectorAll('text')]
      .map((t) => ({ t: t.textContent.trim(), r: t.getBoundingClientRect() }))
      .filter((x) => x.t !== '' && x.r.width > 0 && x.r.height > 0);
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        const a = texts[i].r, b = texts[j].r;
        const dx = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const dy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        // Glyph boxes include line spacing: overlapping by more than 2 px both ways is ink on ink.
        if (dx > 2 && dy > 2) problems.push(name + ': labels overlap: "' + texts[i].t + '" and "' + texts[j].t + '"');
      }
    }
  });
  const boxes = svgs.map((svg) => {
    const r = svg.getBoundingClientRect();
    return { x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height };
  });
  return { problems, plots: svgs.length, boxes, height: document.documentElement.scrollHeight };
})()`;

async function check(file) {
  const url = 'file://' + path.resolve(file);
  const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
  const problems = [];
  const mine = (m) => m.sessionId === sessionId;
  listeners.push((m) => {
    if (!mine(m)) return;
    if (m.method === 'Network.requestWillBeSent') {
      const u = m.params.request.url;
      if (!u.startsWith('data:') && u !== url) problems.push(`network request: ${u}`);
    } else if (m.method === 'Runtime.consoleAPICalled') {
      const text = m.params.args.map((a) => a.value ?? a.description ?? '').join(' ');
      problems.push(`console.${m.params.type}: ${text}`);
    } else if (m.method === 'Runtime.exceptionThrown') {
      problems.push(`exception: ${m.params.exceptionDetails.text}`);
    } else if (m.method === 'Log.entryAdded' && ['error', 'warning'].includes(m.params.entry.level)) {
      problems.push(`${m.params.entry.level}: ${m.params.entry.text} ${m.params.entry.url || ''}`);
    }
  });
  for (const domain of ['Page', 'Network', 'Runtime', 'Log']) await send(`${domain}.enable`, {}, sessionId);
  await send('Emulation.setDeviceMetricsOverride', { width: 1280, height: 900, deviceScaleFactor: 1, mobile: false }, sessionId);
  const loaded = waitFor((m) => mine(m) && m.method === 'Page.loadEventFired', 30000, `${file} to load`);
  await send('Page.navigate', { url }, sessionId);
  await loaded;
  await new Promise((r) => setTimeout(r, 300));
  const { result } = await send('Runtime.evaluate', { expression: pageChecks, returnByValue: true }, sessionId);
  const page = result.value;
  problems.push(...page.problems);
  const height = Math.min(Math.max(page.height, 900), 16000);
  await send('Emulation.setDeviceMetricsOverride', { width: 1280, height, deviceScaleFactor: 1, mobile: false }, sessionId);
  const shot = await send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true }, sessionId);
  const png = file.replace(/\.html?$/, '') + '.png';
  fs.writeFileSync(png, Buffer.from(shot.data, 'base64'));
  // Each plot on its own too (<name>.plot-01.png, ...), to look at one without scrolling.
  for (const [k, b] of page.boxes.entries()) {
    if (b.width < 1 || b.height < 1) continue;
    const one = await send('Page.captureScreenshot', {
      format: 'png', captureBeyondViewport: true,
      clip: { x: b.x, y: b.y, width: b.width, height: b.height, scale: 1 },
    }, sessionId);
    const name = png.replace(/\.png$/, `.plot-${String(k + 1).padStart(2, '0')}.png`);
    fs.writeFileSync(name, Buffer.from(one.data, 'base64'));
  }
  await send('Target.closeTarget', { targetId });
  return { problems, plots: page.plots, png };
}

(async () => {
  let failed = 0;
  const timer = setTimeout(() => {
    console.error('browser-check: timed out; browser stderr:\n' + stderr);
    child.kill('SIGKILL');
    process.exit(1);
  }, 180000);
  try {
    for (const file of files) {
      const { problems, plots, png } = await check(file);
      if (problems.length) {
        failed++;
        console.log(`FAIL ${file} (${plots} plots): ${problems.length} problem(s)`);
        for (const p of problems) console.log(`  - ${p}`);
      } else {
        console.log(`ok   ${file}: ${plots} plots, no console message, no network request, no overlapping labels → ${png}`);
      }
    }
  } catch (e) {
    console.error(`browser-check: ${e.message}\nbrowser stderr:\n${stderr}`);
    failed++;
  }
  clearTimeout(timer);
  // Close the browser and wait for it to exit before its profile directory is removed (it
  // writes there until it ends): nothing is left in the temp dir.
  const exited = new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', resolve);
  });
  send('Browser.close').catch(() => { /* already gone */ });
  const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(killer);
  for (let i = 0; i < 10; i++) {
    try { fs.rmSync(profile, { recursive: true, force: true }); break; } catch (_) {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  if (fs.existsSync(profile)) {
    console.error(`browser-check: could not remove ${profile}`);
    failed++;
  }
  process.exit(failed ? 1 : 0);
})();
