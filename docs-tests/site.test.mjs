// Headless-browser tests of the documentation site rendered by `cargo xtask docs`.
// The site is served from 127.0.0.1 only; every request the pages make must stay there
// (no CDN, no fonts or scripts from elsewhere). Screenshots go to target/screenshots/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
const siteDir = path.resolve(process.env.DOCS_SITE || path.join(here, "..", "target", "site"));
const shotDir = path.resolve(process.env.SCREENSHOT_DIR || path.join(here, "..", "target", "screenshots"));
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const types = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".png": "image/png" };

let server, origin, context, userDataDir;
const foreign = [];

before(async () => {
  assert.ok(fs.existsSync(path.join(siteDir, "en", "rpc", "CreateVolume.html")), `no site in ${siteDir}: run cargo xtask docs first`);
  fs.mkdirSync(shotDir, { recursive: true });
  server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    const file = path.join(siteDir, path.normalize(decodeURIComponent(url.pathname)).replace(/^([/\\])+/, ""));
    if (!file.startsWith(siteDir) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": types[path.extname(file)] || "application/octet-stream" });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${server.address().port}`;
  userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "csikit-chromium-"));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    viewport: { width: 1366, height: 900 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  context.on("request", (req) => {
    const u = req.url();
    if (!u.startsWith(origin) && !u.startsWith("file:") && !u.startsWith("data:") && !u.startsWith("about:")) foreign.push(u);
  });
});

after(async () => {
  await context?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve()));
  if (userDataDir) fs.rmSync(userDataDir, { recursive: true, force: true });
  assert.deepEqual(foreign, [], "pages requested something outside the local site");
});

async function open(url) {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(url.startsWith("file:") ? url : origin + url);
  page.errors = errors;
  return page;
}

async function inViewport(page, id) {
  return page.evaluate((id) => {
    const el = document.getElementById(id);
    if (!el) return false;
    const r = el.getBoundingClientRect();
    return r.top >= 0 && r.top < window.innerHeight;
  }, id);
}

for (const [lang, condition] of [["en", "Source does not exist"], ["ja", "ソースが存在しない"], ["zh", "Source does not exist"]]) {
  test(`CreateVolume page in ${lang}`, async () => {
    const page = await open(`/${lang}/rpc/CreateVolume.html`);
    assert.equal(await page.getAttribute("html", "lang"), lang);
    assert.match(await page.locator("main h1").first().innerText(), /CreateVolume/);
    const rows = page.locator("table.errors td.condition");
    assert.ok((await rows.count()) >= 5, "error table rows");
    assert.ok((await rows.allInnerTexts()).some((t) => t.includes(condition)), `error condition '${condition}'`);
    assert.ok(await page.locator('tr[id="CreateVolumeRequest.volume_capabilities"]').isVisible(), "request field table");
    if (lang !== "en") assert.ok(await page.locator(".notice-source").isVisible(), "source release notice");
    await page.screenshot({ path: path.join(shotDir, `createvolume-${lang}.png`) });
    assert.deepEqual(page.errors, []);
    await page.close();
  });
}

test("switching language keeps the anchor", async () => {
  const page = await open("/en/rpc/CreateVolume.html#createvolume-errors");
  await Promise.all([page.waitForURL(/\/ja\/rpc\/CreateVolume\.html#createvolume-errors$/), page.click('a[data-lang-switch="ja"]')]);
  assert.ok(await inViewport(page, "createvolume-errors"), "ja page scrolled to the errors heading");
  assert.match(await page.locator('[id="createvolume-errors"]').innerText(), /エラー/);
  await page.screenshot({ path: path.join(shotDir, "switch-en-to-ja.png") });
  // Without a hash in the URL, the heading scrolled to is kept.
  await page.goto(origin + "/ja/rpc/CreateVolume.html");
  await page.evaluate(() => document.getElementById("CreateVolumeRequest.parameters").scrollIntoView());
  await Promise.all([page.waitForURL(/\/zh\/rpc\/CreateVolume\.html#/), page.click('a[data-lang-switch="zh"]')]);
  const hash = decodeURIComponent(new URL(page.url()).hash.slice(1));
  assert.ok(hash.startsWith("CreateVolumeRequest."), `landed on ${hash}`);
  assert.ok(await inViewport(page, hash), "zh page scrolled to the same entry");
  await page.screenshot({ path: path.join(shotDir, "switch-ja-to-zh.png") });
  await page.close();
});

test("a backtick identifier links to its field", async () => {
  const page = await open("/en/rpc/CreateVolume.html");
  const link = page.locator("main section.unit a.ref", { has: page.locator("code", { hasText: /^volume_capabilities$/ }) }).first();
  await Promise.all([page.waitForURL(/#CreateVolumeRequest\.volume_capabilities$/), link.click()]);
  assert.ok(await inViewport(page, "CreateVolumeRequest.volume_capabilities"), "field row in view");
  const row = page.locator('tr[id="CreateVolumeRequest.volume_capabilities"]');
  assert.match(await row.innerText(), /REQUIRED/);
  await page.screenshot({ path: path.join(shotDir, "backtick-link-field.png") });
  // A type link goes to the type's own reference page, whose row anchors resolve too.
  await Promise.all([page.waitForURL(/ref\/csi\.v1\.VolumeCapability\.html$/), row.locator("a.ref").first().click()]);
  assert.match(await page.locator("main h1").innerText(), /csi\.v1\.VolumeCapability/);
  assert.ok((await page.locator("ul.used-in li").count()) > 3, "used-in back-references");
  await page.close();
});

for (const [lang, query, expect] of [["en", "NodeStageVolume", /NodeStageVolume/], ["ja", "ボリューム", /ボリューム/], ["zh", "卷", /卷/]]) {
  test(`search in ${lang}`, async () => {
    const page = await open(`/${lang}/index.html`);
    await page.fill("#search", query);
    const results = page.locator("#search-results li a");
    await results.first().waitFor();
    assert.ok((await results.count()) > 0, "results");
    assert.match(await page.locator("#search-results").innerText(), expect);
    await page.screenshot({ path: path.join(shotDir, `search-${lang}.png`) });
    const target = await results.first().getAttribute("href");
    await Promise.all([page.waitForURL((u) => u.href.includes(target.replace(/^(\.\.\/)+/, ""))), page.press("#search", "Enter")]);
    await page.close();
  });
}

test("search works offline from file://", async () => {
  const page = await open(pathToFileURL(path.join(siteDir, "en", "rpc", "CreateVolume.html")).href);
  await page.fill("#search", "volume_capabilities");
  await page.locator("#search-results li a").first().waitFor();
  assert.match(await page.locator("#search-results").innerText(), /CreateVolumeRequest\.volume_capabilities/);
  await page.close();
});
