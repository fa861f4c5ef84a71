// Headless-browser tests of the documentation site rendered by `cargo xtask docs`: an edition
// per release and language (en/v1.12.0/, ja/v1.7.0/, zh/v1.6.0/, addons/NAME/), the release and
// language switchers, badges, search, and the redirects of the layout before releases.
// The site is served from 127.0.0.1 only; every request the pages make must stay there
// (no CDN, no fonts or scripts from elsewhere). Screenshots go to target/screenshots/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { execFileSync } from "node:child_process";
import { launchBrowser, serveSite, here, siteDir, shotDir, newestRelease, newestReleaseWithSpec, corpusDir } from "./support.mjs";

let site, origin, browser, context;

before(async () => {
  assert.ok(fs.existsSync(path.join(siteDir, "en", "v1.12.0", "rpc", "CreateVolume.html")), `no site in ${siteDir}: run cargo xtask docs first`);
  fs.mkdirSync(shotDir, { recursive: true });
  site = await serveSite();
  origin = site.origin;
  browser = await launchBrowser((u) => u.startsWith(origin) || u.startsWith("file:"));
  context = browser.context;
});

after(async () => {
  await browser?.close();
  await site?.close();
  assert.deepEqual(browser?.foreign ?? [], [], "pages requested something outside the local site");
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

async function openReleaseMenu(page) {
  await page.click("details.releases > summary");
  await page.locator("details.releases .menu").waitFor();
}

for (const [edition, lang, condition] of [["en/v1.12.0", "en", "Source does not exist"], ["ja/v1.7.0", "ja", "ソースが存在しない"], ["zh/v1.6.0", "zh", "Source does not exist"]]) {
  test(`CreateVolume page in ${edition}`, async () => {
    const page = await open(`/${edition}/rpc/CreateVolume.html`);
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
  // ja is release v1.7.0: from the English v1.7.0 page the place is kept exactly.
  const page = await open("/en/v1.7.0/rpc/CreateVolume.html#createvolume-errors");
  await Promise.all([page.waitForURL(/\/ja\/v1\.7\.0\/rpc\/CreateVolume\.html#createvolume-errors$/), page.click('a[data-lang-switch="ja"]')]);
  assert.ok(await inViewport(page, "createvolume-errors"), "ja page scrolled to the errors heading");
  assert.match(await page.locator('[id="createvolume-errors"]').innerText(), /エラー/);
  assert.ok(await page.locator("#release-notice").isHidden(), "no notice when the place exists");
  await page.screenshot({ path: path.join(shotDir, "switch-en-to-ja.png") });
  // Without a hash in the URL, the heading scrolled to is kept.
  await page.goto(origin + "/ja/v1.7.0/rpc/CreateVolume.html");
  await page.evaluate(() => document.getElementById("CreateVolumeRequest.parameters").scrollIntoView());
  await Promise.all([page.waitForURL(/\/zh\/v1\.6\.0\/rpc\/CreateVolume\.html#/), page.click('a[data-lang-switch="zh"]')]);
  const hash = decodeURIComponent(new URL(page.url()).hash.slice(1));
  assert.ok(hash.startsWith("CreateVolumeRequest."), `landed on ${hash}`);
  assert.ok(await inViewport(page, hash), "zh page scrolled to the same entry");
  await page.screenshot({ path: path.join(shotDir, "switch-ja-to-zh.png") });
  await page.close();
});

test("switching release keeps the page and anchor", async () => {
  const page = await open("/en/v1.12.0/rpc/CreateVolume.html#CreateVolumeRequest.volume_capabilities");
  await openReleaseMenu(page);
  await page.screenshot({ path: path.join(shotDir, "release-menu.png") });
  await Promise.all([
    page.waitForURL(/\/en\/v1\.10\.0\/rpc\/CreateVolume\.html#CreateVolumeRequest\.volume_capabilities$/),
    page.click('a[data-release-switch="en/v1.10.0"]'),
  ]);
  assert.ok(await inViewport(page, "CreateVolumeRequest.volume_capabilities"), "v1.10.0 page scrolled to the same row");
  assert.match(await page.locator("header .release").innerText(), /v1\.10\.0/);
  assert.ok(await page.locator("#release-notice").isHidden(), "no notice when the element exists");
  await page.screenshot({ path: path.join(shotDir, "switch-release-anchor.png") });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("switching to a release without the page says so and shows its contents", async () => {
  const page = await open("/en/v1.12.0/rpc/GetSnapshot.html#GetSnapshotRequest.snapshot_id");
  await openReleaseMenu(page);
  await Promise.all([page.waitForURL(/\/en\/v1\.10\.0\/index\.html\?missing=GetSnapshot&added=v1\.12$/), page.click('a[data-release-switch="en/v1.10.0"]')]);
  const notice = page.locator("#release-notice");
  assert.ok(await notice.isVisible(), "notice visible");
  assert.match(await notice.innerText(), /“GetSnapshot” is not part of v1\.10\.0\. It was added in v1\.12\. Here are the contents of v1\.10\.0\./);
  assert.ok(await page.locator("section.contents").isVisible(), "the release's contents page");
  assert.equal(await page.locator('section.contents a:has(code:text-is("GetSnapshot"))').count(), 0, "no GetSnapshot in v1.10.0");
  await page.screenshot({ path: path.join(shotDir, "switch-release-missing-page.png") });
  // A field newer than the target release: the same page, with a notice naming the field.
  await page.goto(origin + "/en/v1.12.0/rpc/CreateVolume.html#CreateVolumeRequest.mutable_parameters");
  await openReleaseMenu(page);
  await Promise.all([page.waitForURL(/\/en\/v1\.8\.0\/rpc\/CreateVolume\.html#CreateVolumeRequest\.mutable_parameters$/), page.click('a[data-release-switch="en/v1.8.0"]')]);
  await notice.waitFor({ state: "visible" });
  assert.match(await notice.innerText(), /“CreateVolumeRequest\.mutable_parameters” is not part of v1\.8\.0/);
  assert.ok(await notice.locator("a").isVisible(), "a link to the release's contents");
  await page.screenshot({ path: path.join(shotDir, "switch-release-missing-anchor.png") });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("since and alpha-until badges", async () => {
  const page = await open("/en/v1.12.0/rpc/GetSnapshot.html");
  assert.equal(await page.locator(".rpc-summary .badge-since").innerText(), "since v1.12");
  await page.goto(origin + "/en/v1.12.0/rpc/CreateVolume.html#CreateVolumeRequest.mutable_parameters");
  const row = page.locator('tr[id="CreateVolumeRequest.mutable_parameters"]');
  assert.equal(await row.locator(".badge-since").innerText(), "since v1.9");
  assert.equal(await row.locator(".badge-alpha-until").innerText(), "alpha until v1.12");
  assert.equal(await page.locator('tr[id="CreateVolumeRequest.name"] .badge-since').innerText(), "since v1.0");
  await page.screenshot({ path: path.join(shotDir, "badges-since.png") });
  await page.goto(origin + "/en/v1.12.0/rpc/CreateVolumeGroupSnapshot.html");
  assert.equal(await page.locator(".rpc-summary .badge-alpha-until").innerText(), "alpha until v1.11");
  // The changes page of v1.12.0, from the release menu.
  await openReleaseMenu(page);
  await Promise.all([page.waitForURL(/\/en\/v1\.12\.0\/changes\.html$/), page.click(".menu-links a[href$='changes.html']")]);
  assert.match(await page.locator("main").innerText(), /RPC Controller\.GetSnapshot added/);
  await page.screenshot({ path: path.join(shotDir, "changes-v1.12.0.png") });
  await page.close();
});

test("replication's EnableVolumeReplication page", async () => {
  const page = await open("/addons/replication/rpc/EnableVolumeReplication.html");
  assert.match(await page.locator("main h1").first().innerText(), /EnableVolumeReplication/);
  assert.match(await page.locator("header .release").innerText(), /replication · main/);
  assert.ok((await page.locator("table.errors td.condition").count()) >= 3, "error table rows");
  const source = page.locator('tr[id="EnableVolumeReplicationRequest.replication_source"]');
  assert.ok(await source.isVisible(), "request field table");
  assert.equal(await source.locator(".badge-since").innerText(), "since main");
  const secrets = page.locator('tr[id="EnableVolumeReplicationRequest.secrets"]');
  assert.ok(await secrets.locator(".badge-secret").isVisible(), "secret badge");
  assert.equal(await secrets.locator(".badge-since").innerText(), "since v0.1.1");
  await page.screenshot({ path: path.join(shotDir, "replication-enablevolumereplication.png"), fullPage: true });
  // Its search index is the package's own.
  await page.fill("#search", "replication_source");
  await page.locator("#search-results [role=option]").first().waitFor();
  assert.match(await page.locator("#search-results").innerText(), /EnableVolumeReplicationRequest\.replication_source/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("the layout before releases redirects, anchor kept", async () => {
  const page = await open("/en/rpc/CreateVolume.html#CreateVolumeRequest.volume_capabilities");
  const newest = newestRelease().replaceAll(".", "\\.");
  await page.waitForURL(new RegExp(`/en/${newest}/rpc/CreateVolume\\.html#CreateVolumeRequest\\.volume_capabilities$`));
  assert.ok(await inViewport(page, "CreateVolumeRequest.volume_capabilities"), "scrolled to the field");
  await page.goto(origin + "/ja/rpc/GetSnapshot.html");
  await page.waitForURL(/\/ja\/v1\.7\.0\/index\.html\?missing=GetSnapshot&added=v1\.12$/);
  await page.locator("#release-notice").waitFor({ state: "visible" });
  assert.match(await page.locator("#release-notice").innerText(), /GetSnapshot.*v1\.7\.0.*v1\.12/s);
  await page.screenshot({ path: path.join(shotDir, "redirect-ja-missing.png") });
  await page.close();
});

test("a backtick identifier links to its field", async () => {
  const page = await open("/en/v1.12.0/rpc/CreateVolume.html");
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

for (const [edition, query, expect] of [["en/v1.12.0", "NodeStageVolume", /NodeStageVolume/], ["ja/v1.7.0", "ボリューム", /ボリューム/], ["zh/v1.6.0", "卷", /卷/]]) {
  test(`search in ${edition}`, async () => {
    const page = await open(`/${edition}/index.html`);
    await page.fill("#search", query);
    const results = page.locator("#search-results [role=option]");
    await results.first().waitFor();
    assert.ok((await results.count()) > 0, "results");
    assert.match(await page.locator("#search-results").innerText(), expect);
    await page.screenshot({ path: path.join(shotDir, `search-${edition.split("/")[0]}.png`) });
    const target = await results.first().getAttribute("data-href");
    await Promise.all([page.waitForURL((u) => u.href.includes(target.replace(/^(\.\.\/)+/, ""))), page.press("#search", "Enter")]);
    await page.close();
  });
}

test("search works offline from file://, and in an older release", async () => {
  const page = await open(pathToFileURL(path.join(siteDir, "en", "v1.12.0", "rpc", "CreateVolume.html")).href);
  await page.fill("#search", "volume_capabilities");
  await page.locator("#search-results [role=option]").first().waitFor();
  assert.match(await page.locator("#search-results").innerText(), /CreateVolumeRequest\.volume_capabilities/);
  // v1.0.0's index has its own entries (no GetSnapshot there).
  await page.goto(pathToFileURL(path.join(siteDir, "en", "v1.0.0", "index.html")).href);
  await page.fill("#search", "GetSnapshot");
  await page.waitForFunction(() => document.getElementById("search-status").textContent !== "");
  assert.doesNotMatch(await page.locator("#search-results").innerText(), /^RPC\s*GetSnapshot/m);
  // The missing-page notice works from file:// too.
  await page.goto(pathToFileURL(path.join(siteDir, "en", "v1.10.0", "index.html")).href + "?missing=GetSnapshot&added=v1.12");
  await page.locator("#release-notice").waitFor({ state: "visible" });
  await page.close();
});

// Every error-table row an edition's pages show, read from the rendered HTML (the oracle the
// search must agree with): its page and anchor, code and condition text.
function errorRows(edition) {
  const rows = [];
  const dir = path.join(siteDir, edition);
  const pages = [...fs.readdirSync(dir).filter((f) => f.endsWith(".html")), ...fs.readdirSync(path.join(dir, "rpc")).map((f) => `rpc/${f}`)];
  const text = (html) => html.replace(/<[^>]+>/g, "").replace(/&#(\d+);/g, (m, n) => String.fromCharCode(Number(n))).replace(/&amp;/g, "&").replace(/\s+/g, " ").trim();
  for (const page of pages) {
    const html = fs.readFileSync(path.join(dir, page), "utf8");
    for (const m of html.matchAll(/<tr id="([^"]+)"[^>]*><td class="condition">(.*?)<\/td><td><span class="grpc">(\d+) (\w+)<\/span>/gs)) {
      rows.push({ href: `${page}#${m[1]}`, condition: text(m[2]), code: m[4] });
    }
  }
  return rows;
}

// The search results as [{href relative to the edition, kind label, text}].
async function searchResults(page, query) {
  await page.fill("#search", query);
  await page.locator("#search-results [role=option]").first().waitFor();
  return page.locator("#search-results [role=option]").evaluateAll((opts) => opts.map((o) => ({
    href: o.getAttribute("data-href").replace(/^(\.\.\/)+/, ""),
    kind: o.querySelector(".kind").textContent,
    text: o.textContent,
  })));
}

test("search finds every error-table row with a code, or with a condition, each linking to its row", async () => {
  // A release with error tables: the newest whose spec.md is in the corpus.
  const release = newestReleaseWithSpec();
  const edition = `en/${release}`;
  const rows = errorRows(edition);
  assert.ok(rows.length >= 40, `${edition}: only ${rows.length} error rows on its pages`);
  const page = await open(`/${edition}/index.html`);
  const errorKind = await page.evaluate(async () => {
    await new Promise((resolve) => { const s = document.createElement("script"); s.src = "search-index.js"; s.onload = resolve; document.head.appendChild(s); });
    return window.CSIKIT_SEARCH.kinds.error;
  });

  // A code: every row that has it, each naming its RPC, ranked before anything else.
  for (const code of ["ALREADY_EXISTS", "NOT_FOUND"]) {
    const expected = rows.filter((r) => r.code === code).map((r) => r.href).sort();
    assert.ok(expected.length >= 5, `${code}: ${expected.length} rows`);
    const results = await searchResults(page, code);
    const errors = results.filter((r) => r.kind === errorKind);
    assert.deepEqual(errors.map((r) => r.href).sort(), expected, `${code}: the rows listed`);
    assert.deepEqual(results.slice(0, expected.length).map((r) => r.kind), expected.map(() => errorKind), `${code}: rows first`);
    for (const r of errors) {
      const rpc = r.href.startsWith("rpc/") ? r.href.slice(4, r.href.indexOf(".html")) : null;
      if (rpc) assert.ok(r.text.includes(`${rpc} · `) && r.text.includes(code), `${r.text}: names its RPC and code`);
    }
    if (code === "ALREADY_EXISTS") await page.screenshot({ path: path.join(shotDir, "search-error-code.png") });
  }

  // A condition: its rows first, every one of them.
  for (const condition of ["Volume published but is incompatible", "Source does not exist"]) {
    const expected = rows.filter((r) => r.condition === condition).map((r) => r.href).sort();
    assert.ok(expected.length >= 1, `no row '${condition}'`);
    const results = await searchResults(page, condition);
    assert.deepEqual(results.slice(0, expected.length).map((r) => r.href).sort(), expected, `'${condition}': its rows first`);
  }
  assert.match((await searchResults(page, "Source does not exist"))[0].href, /^rpc\/CreateVolume\.html#/, "CreateVolume's row, not DeleteVolume's prose");
  await page.screenshot({ path: path.join(shotDir, "search-error-condition.png") });

  // The result opens the row in its table.
  const [first] = await searchResults(page, "Volume published but is incompatible");
  await Promise.all([page.waitForURL((u) => u.href.endsWith(first.href)), page.press("#search", "Enter")]);
  const id = decodeURIComponent(new URL(page.url()).hash.slice(1));
  assert.ok(await page.locator(`table.errors tr[id="${id}"]`).isVisible(), `${id} is a row of an error table`);
  assert.ok(await inViewport(page, id), "scrolled to the row");
  assert.equal(await page.evaluate(() => document.querySelector("tr:target td.condition").textContent), "Volume published but is incompatible");
  await page.screenshot({ path: path.join(shotDir, "search-error-row.png") });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("search finds the Japanese edition's error rows in Japanese", async () => {
  const page = await open("/ja/v1.7.0/index.html");
  const results = await searchResults(page, "ソースが存在しない");
  assert.equal(results[0].href, "rpc/CreateVolume.html#CreateVolume.error.NOT_FOUND");
  assert.match(results[0].text, /CreateVolume · 5 NOT_FOUND.*ソースが存在しない/);
  // The general error table's rows too, in their table on their chapter page.
  const general = (await searchResults(page, "PERMISSION_DENIED")).filter((r) => /#error\.PERMISSION_DENIED$/.test(r.href));
  assert.equal(general.length, 1, "the general table's PERMISSION_DENIED row");
  assert.match(general[0].text, /全 RPC 共通 · 7 PERMISSION_DENIED/);
  await page.screenshot({ path: path.join(shotDir, "search-error-ja.png") });
  await Promise.all([page.waitForURL(/#error\.PERMISSION_DENIED$/), page.click(`#search-results [data-href$="#error.PERMISSION_DENIED"]`)]);
  assert.ok(await inViewport(page, "error.PERMISSION_DENIED"), "scrolled to the general table's row");
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("a release in the corpus as its csi.proto alone, with no older spec.md to carry from: a notice on each page", async () => {
  // A corpus made here: v1.12.0 as its csi.proto alone; rendered by the xtask binary
  // `cargo xtask docs` built. (The real corpus's proto-only release carries an older release's
  // prose: a11y.test.mjs checks its banner.)
  const xtask = path.resolve(process.env.XTASK || path.join(here, "..", "target", "debug", "xtask"));
  assert.ok(fs.existsSync(xtask), `no xtask at ${xtask}: run cargo xtask docs first`);
  const real = corpusDir();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "csikit-proto-only-"));
  try {
    const corpus = path.join(work, "corpus");
    fs.mkdirSync(path.join(corpus, "csi-spec", "v1.12.0"), { recursive: true });
    fs.copyFileSync(path.join(real, "csi-spec", "v1.12.0", "csi.proto"), path.join(corpus, "csi-spec", "v1.12.0", "csi.proto"));
    const out = path.join(work, "site");
    execFileSync(xtask, ["docs", "--corpus", corpus, "--out", out], { stdio: ["ignore", "ignore", "pipe"] });
    const page = await open(pathToFileURL(path.join(out, "en", "v1.12.0", "rpc", "CreateVolume.html")).href);
    const notice = page.locator(".notice-proto-only");
    assert.ok(await notice.isVisible(), "proto-only notice visible");
    assert.match(await notice.innerText(), /Only the \.proto of CSI v1\.12\.0 is in the corpus.*prose and error tables are not in the corpus/);
    assert.ok(await page.locator('tr[id="CreateVolumeRequest.volume_capabilities"] .badge-required').isVisible(), "field table with badges");
    assert.equal(await page.locator("table.errors").count(), 0, "no error table");
    assert.equal(await page.locator(".notice-carried").count(), 0, "nothing carried, no banner");
    await page.screenshot({ path: path.join(shotDir, "proto-only-createvolume.png") });
    assert.deepEqual(page.errors, []);
    await page.close();
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
});
