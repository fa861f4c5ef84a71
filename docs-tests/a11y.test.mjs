// Accessibility of the documentation site rendered by `cargo xtask docs`: axe-core over every
// page kind in each language (no violation at any impact level), no sideways scrolling at 320 px,
// a keyboard-only walk (the skip link, the release menu closed by Escape, search as a WAI-ARIA
// combobox driven by the arrow keys), and on a phone the navigation folded behind its button
// (opened and closed by keyboard; without JavaScript nothing is folded).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { launchBrowser, serveSite, axeViolations, sidewaysOverflow, siteDir, shotDir, newestRelease, newestReleaseWithSpec } from "./support.mjs";

let site, browser;

before(async () => {
  assert.ok(fs.existsSync(path.join(siteDir, "en", "v1.12.0", "rpc", "CreateVolume.html")), `no site in ${siteDir}: run cargo xtask docs first`);
  fs.mkdirSync(shotDir, { recursive: true });
  site = await serveSite();
  browser = await launchBrowser((u) => u.startsWith(site.origin));
});

after(async () => {
  await browser?.close();
  await site?.close();
  assert.deepEqual(browser?.foreign ?? [], [], "pages requested something outside the local site");
});

async function open(url, viewport) {
  const page = await browser.context.newPage();
  if (viewport) await page.setViewportSize(viewport);
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(site.origin + url);
  page.errors = errors;
  return page;
}

// The first chapter of an edition: the first entry of its sidebar's chapter list.
function firstChapter(edition) {
  const html = fs.readFileSync(path.join(siteDir, edition, "index.html"), "utf8");
  const side = html.slice(html.indexOf('<nav class="side"'));
  const chapters = side.slice(side.indexOf("<ul>"));
  // The guides' list, if the edition has guides, comes before the chapters'.
  return [...chapters.matchAll(/<a href="([^"#]+)"/g)].map((m) => m[1]).find((h) => !h.startsWith("guide/"));
}

// The guides an edition lists in its navigation (paths under guide/).
function guidePages(edition) {
  const html = fs.readFileSync(path.join(siteDir, edition, "index.html"), "utf8");
  const side = html.slice(html.indexOf('<nav class="side"'));
  const nav = side.slice(0, side.indexOf("</nav>"));
  return [...new Set([...nav.matchAll(/<a href="(guide\/[^"#]+)"/g)].map((m) => m[1]))];
}

// The page of an RPC new in an edition: the first its changes page lists as added.
function newRpcPage(edition) {
  const html = fs.readFileSync(path.join(siteDir, edition, "changes.html"), "utf8");
  return html.match(/data-element="rpc" data-change="added">[^<]*<a class="ref" href="(rpc\/[^"#]+)"/)[1];
}

// Every page kind: the site's front page; per language, an edition's contents, a chapter, an
// RPC, a message, an enum, its changes and (a translation) its status; a csi-addons package's pages.
const kinds = [["front", "index.html"]];
for (const edition of ["en/v1.12.0", "ja/v1.7.0", "zh/v1.6.0"]) {
  kinds.push(
    [`${edition} contents`, `${edition}/index.html`],
    [`${edition} chapter`, () => `${edition}/${firstChapter(edition)}`],
    [`${edition} RPC`, `${edition}/rpc/CreateVolume.html`],
    [`${edition} message`, `${edition}/ref/csi.v1.CreateVolumeRequest.html`],
    [`${edition} enum`, `${edition}/ref/csi.v1.VolumeCapability.AccessMode.Mode.html`],
    [`${edition} changes`, `${edition}/changes.html`],
    ...(edition.startsWith("en/") ? [] : [[`${edition} status`, `${edition}/status.html`]]));
}
// The newest edition, whose text may be carried from an older release: its contents, a chapter,
// an RPC, an RPC new in it (its proto comment under a notice), its changes and its guides.
const newest = `en/${newestRelease()}`;
kinds.push(
  [`${newest} contents`, `${newest}/index.html`],
  [`${newest} chapter`, () => `${newest}/${firstChapter(newest)}`],
  [`${newest} RPC`, `${newest}/rpc/CreateVolume.html`],
  [`${newest} new RPC`, () => `${newest}/${newRpcPage(newest)}`],
  [`${newest} changes`, `${newest}/changes.html`],
  ...guidePages(newest).map((g) => [`${newest} guide ${g}`, `${newest}/${g}`]));
kinds.push(
  ["addons contents", "addons/replication/index.html"],
  ["addons RPC", "addons/replication/rpc/EnableVolumeReplication.html"],
  ["addons changes", "addons/replication/changes.html"]);

for (const [kind, where] of kinds) {
  test(`${kind}: no axe violation, no sideways scroll at 320 px`, async () => {
    const url = "/" + (typeof where === "function" ? where() : where);
    const page = await open(url);
    const violations = await axeViolations(page);
    await page.setViewportSize({ width: 320, height: 640 });
    const overflow = await sidewaysOverflow(page);
    console.log(`axe ${kind} (${url}): ${violations.length} violation(s)${violations.map((v) => ` ${v.id}/${v.impact}`).join("")}; ${overflow.over}px sideways at 320 px`);
    assert.deepEqual(violations, [], `${url}: axe violations`);
    assert.ok(overflow.over <= 0, `${url} scrolls sideways by ${overflow.over}px at 320 px: ${overflow.culprits.join(", ")}`);
    assert.deepEqual(page.errors, []);
    await page.close();
  });
}

const focused = (page) => page.evaluate(() => {
  const a = document.activeElement;
  return { tag: a.tagName.toLowerCase(), id: a.id, cls: a.className, text: a.textContent.trim().slice(0, 40), inMain: !!a.closest("main"), inMenu: !!a.closest("details.releases .menu"), inNav: !!a.closest("nav.side") };
});

test("keyboard only: skip link, release menu, search", async () => {
  const page = await open("/en/v1.12.0/rpc/CreateVolume.html");
  // The first Tab stop is the skip link, shown when focused; it moves focus into main, so the
  // next Tab stop is the page's content, not the sidebar.
  await page.keyboard.press("Tab");
  assert.equal((await focused(page)).cls, "skip");
  assert.ok(await page.locator("a.skip").isVisible(), "the focused skip link is visible");
  await page.screenshot({ path: path.join(shotDir, "a11y-skip-link.png") });
  await page.keyboard.press("Enter");
  assert.equal((await focused(page)).id, "main");
  await page.keyboard.press("Tab");
  assert.ok((await focused(page)).inMain, "the Tab after the skip link lands in the content");

  // The release menu: opened with Enter, its links reachable with Tab, closed by Escape with the
  // focus back on its button.
  const summary = page.locator("details.releases > summary");
  await summary.focus();
  await page.keyboard.press("Enter");
  assert.equal(await page.locator("details.releases").getAttribute("open"), "");
  await page.keyboard.press("Tab");
  assert.ok((await focused(page)).inMenu, "Tab goes into the open menu");
  assert.deepEqual(await axeViolations(page), [], "axe with the release menu open");
  await page.screenshot({ path: path.join(shotDir, "a11y-release-menu.png") });
  await page.keyboard.press("Escape");
  assert.equal(await page.locator("details.releases").getAttribute("open"), null, "Escape closes the menu");
  assert.equal((await focused(page)).tag, "summary", "focus back on the menu's button");

  // Search, a combobox: typing fills the listbox and announces the count; the arrow keys move
  // the active option (aria-activedescendant), Enter opens it, Escape collapses the list.
  const input = page.locator("#search");
  await input.focus();
  assert.equal(await input.getAttribute("role"), "combobox");
  assert.equal(await input.getAttribute("aria-expanded"), "false");
  await page.keyboard.type("NodeStage");
  await page.locator("#search-results [role=option]").first().waitFor();
  assert.equal(await input.getAttribute("aria-expanded"), "true");
  assert.equal(await input.getAttribute("aria-controls"), "search-results");
  const options = page.locator("#search-results [role=option]");
  const count = await options.count();
  assert.match(await page.locator("#search-status").innerText(), new RegExp(`^${count} results?$`));
  assert.equal(await input.getAttribute("aria-activedescendant"), null, "no option active before an arrow key");
  await page.keyboard.press("ArrowDown");
  const first = await options.nth(0).getAttribute("id");
  assert.equal(await input.getAttribute("aria-activedescendant"), first);
  assert.equal(await options.nth(0).getAttribute("aria-selected"), "true");
  await page.keyboard.press("ArrowDown");
  assert.equal(await input.getAttribute("aria-activedescendant"), await options.nth(1).getAttribute("id"));
  assert.equal(await options.nth(0).getAttribute("aria-selected"), "false");
  await page.keyboard.press("ArrowUp");
  assert.equal(await input.getAttribute("aria-activedescendant"), first);
  assert.equal((await focused(page)).id, "search", "focus stays in the input");
  assert.deepEqual(await axeViolations(page), [], "axe with the search results open");
  await page.screenshot({ path: path.join(shotDir, "a11y-search-combobox.png") });
  await page.keyboard.press("Escape");
  assert.equal(await input.getAttribute("aria-expanded"), "false");
  assert.ok(await page.locator("#search-results").isHidden());
  // Down again reopens the list; Enter opens the active option.
  await page.keyboard.press("ArrowDown");
  assert.equal(await input.getAttribute("aria-expanded"), "true");
  await page.keyboard.press("ArrowDown");
  const target = await page.locator(`[id="${await input.getAttribute("aria-activedescendant")}"]`).getAttribute("data-href");
  await Promise.all([page.waitForURL((u) => u.href.endsWith(target.replace(/^(\.\.\/)+/, ""))), page.keyboard.press("Enter")]);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("search with nothing found says so, to a screen reader too", async () => {
  const page = await open("/ja/v1.7.0/index.html");
  await page.locator("#search").fill("zzzzqqqq");
  // Shown (class "shown"), not only in the accessibility tree: "visible" alone would match the
  // visually hidden 1 px box of the region before the search has run.
  const status = page.locator("#search-status.shown");
  await status.waitFor();
  assert.equal(await status.innerText(), await page.locator("body").getAttribute("data-no-results"));
  assert.equal(await page.locator("#search").getAttribute("aria-expanded"), "false");
  assert.equal(await page.locator("#search-results [role=option]").count(), 0);
  assert.deepEqual(await axeViolations(page), []);
  await page.close();
});

test("long names wrap in text at 320 px, but table columns keep identifiers whole", async () => {
  const page = await open("/en/v1.12.0/rpc/CreateVolume.html");
  // A field name squeezed to a letter's width would show as several line boxes.
  const broken = await page.locator("table.fields td code").evaluateAll((codes) => codes.filter((c) => c.getClientRects().length > 1).map((c) => c.textContent));
  assert.deepEqual(broken, [], "identifiers broken across lines in the field tables");
  await page.close();
});

// A phone's screen (an iPhone 12 to 15 in CSS pixels).
const phone = { width: 390, height: 844 };
const phoneEditions = [...new Set([`en/${newestRelease()}`, `en/${newestReleaseWithSpec()}`, "ja/v1.7.0", "zh/v1.6.0"])];

for (const edition of phoneEditions) {
  test(`${edition} RPC page on a 390 × 844 screen: its title without scrolling, the navigation folded`, async () => {
    const page = await open(`/${edition}/rpc/CreateVolume.html`, phone);
    const title = await page.locator("main h1").first().boundingBox();
    assert.ok(title && title.y >= 0 && title.y + title.height <= phone.height, `the title is at ${title?.y}px, below the ${phone.height}px screen`);
    assert.equal(await page.evaluate(() => window.scrollY), 0);
    const toggle = page.locator("button.nav-toggle");
    assert.ok(await toggle.isVisible(), "the navigation's button");
    assert.equal(await toggle.getAttribute("aria-expanded"), "false");
    assert.equal(await page.locator(`#${await toggle.getAttribute("aria-controls")}`).evaluate((n) => n.matches("nav.side")), true, "aria-controls names the navigation");
    assert.ok(await page.locator("nav.side").isHidden(), "the navigation is folded");
    console.log(`${edition} at 390 × 844: the title at ${Math.round(title.y)}–${Math.round(title.y + title.height)}px`);
    assert.deepEqual(await axeViolations(page), [], "axe with the navigation folded");
    await page.screenshot({ path: path.join(shotDir, `phone-rpc-${edition.replace("/", "-")}.png`) });
    assert.deepEqual(page.errors, []);
    await page.close();
  });
}

test("keyboard only on a phone: the navigation's button opens, Escape closes, the content follows", async () => {
  const page = await open(`/en/${newestReleaseWithSpec()}/rpc/CreateVolume.html`, phone);
  const toggle = page.locator("button.nav-toggle");
  // From the top: the skip link, the header's controls, then the button; nothing of the folded
  // navigation or of the content before it.
  const stops = [];
  for (let i = 0; i < 20 && (stops.at(-1)?.cls !== "nav-toggle"); i++) {
    await page.keyboard.press("Tab");
    stops.push(await focused(page));
  }
  assert.equal(stops.at(-1).cls, "nav-toggle", `Tab stops: ${stops.map((f) => f.cls || f.id || f.tag).join(", ")}`);
  assert.equal(stops[0].cls, "skip", "the skip link first");
  assert.ok(stops.every((f) => !f.inMain && !f.inNav), "nothing of the navigation or content before the button");
  await page.keyboard.press("Enter");
  assert.equal(await toggle.getAttribute("aria-expanded"), "true");
  assert.ok(await page.locator("nav.side").isVisible(), "Enter opens the navigation");
  await page.keyboard.press("Tab");
  assert.ok((await focused(page)).inNav, "the Tab after the open button goes into the navigation");
  assert.deepEqual(await axeViolations(page), [], "axe with the navigation open");
  for (const width of [390, 320]) {
    await page.setViewportSize({ width, height: phone.height });
    const overflow = await sidewaysOverflow(page);
    assert.ok(overflow.over <= 0, `the open navigation scrolls sideways by ${overflow.over}px at ${width} px: ${overflow.culprits.join(", ")}`);
  }
  await page.setViewportSize(phone);
  await page.screenshot({ path: path.join(shotDir, "a11y-phone-navigation-open.png") });
  await page.keyboard.press("Escape");
  assert.equal(await toggle.getAttribute("aria-expanded"), "false", "Escape closes the navigation");
  assert.ok(await page.locator("nav.side").isHidden());
  assert.equal((await focused(page)).cls, "nav-toggle", "focus back on the button");
  // Space works as on any button; the Tab after the closed button goes to the content.
  await page.keyboard.press("Space");
  assert.equal(await toggle.getAttribute("aria-expanded"), "true");
  await page.keyboard.press("Space");
  assert.equal(await toggle.getAttribute("aria-expanded"), "false");
  await page.keyboard.press("Tab");
  assert.ok((await focused(page)).inMain, "the Tab after the closed button lands in the content");
  // On a wide screen the navigation is always there and the button is not.
  await page.setViewportSize({ width: 1366, height: 900 });
  assert.ok(await page.locator("nav.side").isVisible() && await toggle.isHidden(), "a wide screen shows the navigation, no button");
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("without JavaScript on a phone nothing is folded: the skip link, the navigation, the content", async () => {
  const off = await launchBrowser((u) => u.startsWith(site.origin), { javaScriptEnabled: false });
  try {
    const page = await off.context.newPage();
    await page.setViewportSize(phone);
    await page.goto(`${site.origin}/en/${newestReleaseWithSpec()}/rpc/CreateVolume.html`);
    assert.ok(await page.locator("button.nav-toggle").isHidden(), "no button that could not work");
    assert.ok(await page.locator("nav.side").isVisible(), "the navigation is shown");
    await page.keyboard.press("Tab");
    assert.ok(await page.locator("a.skip").isVisible(), "the skip link, shown when focused");
    await page.keyboard.press("Enter");
    await page.waitForURL(/#main$/);
    const title = await page.locator("main h1").first().boundingBox();
    assert.ok(title && title.y >= 0 && title.y + title.height <= phone.height, `after the skip link the title is at ${title?.y}px`);
    await page.screenshot({ path: path.join(shotDir, "a11y-phone-no-javascript.png") });
    await page.close();
  } finally {
    await off.close();
  }
  assert.deepEqual(off.foreign, []);
});

// The newest edition's text carried from an older release (when it is): the banner is a named
// region a screen reader lists among the landmarks, visible at the top of the content on a phone
// before the page's own text; an RPC new in the release says instead that its prose is not
// available. Screenshots of both at 390 px.
test(`${newest}: the banner on carried text is visible and announced; a new RPC says why it has no prose`, async (t) => {
  const page = await open(`/${newest}/rpc/CreateVolume.html`, phone);
  const banner = page.locator("main section.notice-carried");
  if ((await banner.count()) === 0) {
    // The newest release has its own spec.md: nothing is carried, no banner anywhere.
    assert.equal(await page.locator(".unit-carried, table.errors caption").count(), 0);
    t.skip(`${newest} has its own spec.md`);
    await page.close();
    return;
  }
  const region = page.getByRole("region", { name: await banner.getAttribute("aria-label") });
  assert.equal(await region.count(), 1, "the banner is a named region");
  assert.ok(await region.isVisible(), "the banner is shown");
  const from = await page.locator("main .unit-carried").first().getAttribute("data-carried-from");
  assert.match(await region.innerText(), new RegExp(`${from.replaceAll(".", "\\.")}'s, carried from its spec\\.md`), "it names the release");
  // Before the page's own text, and on the screen without scrolling at 390 px.
  const [b, h] = [await region.boundingBox(), await page.locator("main h1").first().boundingBox()];
  assert.ok(b.y < h.y, "the banner comes before the title");
  assert.ok(b.y + b.height <= phone.height, `the banner ends at ${b.y + b.height}px, below the screen`);
  assert.ok(await page.locator("table.errors caption").first().isVisible(), "the carried error table says so");
  assert.deepEqual(await axeViolations(page), []);
  await page.screenshot({ path: path.join(shotDir, "phone-carried-rpc.png"), fullPage: false });

  // An RPC new in the release: no banner, a named notice saying its prose is not available.
  await page.goto(`${site.origin}/${newest}/${newRpcPage(newest)}`);
  assert.equal(await page.locator("main section.notice-carried").count(), 0, "no carried text, no banner");
  const notice = page.getByRole("region", { name: "Prose not available" });
  assert.ok(await notice.isVisible(), "the new RPC's notice");
  assert.match(await notice.innerText(), new RegExp(`new in ${newestRelease().replaceAll(".", "\\.")}`));
  assert.ok(await page.locator("main .badge-since").first().isVisible(), "its since badge");
  assert.deepEqual(await axeViolations(page), []);
  await page.screenshot({ path: path.join(shotDir, "phone-new-rpc.png"), fullPage: false });
  assert.deepEqual(page.errors, []);
  await page.close();
});

// Each guide of the newest edition is reached from its contents page by keyboard alone: Tab to
// its link in the contents list, Enter; the guide's tables have no sideways scroll at 320 px and
// no axe violation.
for (const guide of guidePages(newest)) {
  test(`${newest}/${guide}: reached by keyboard from the contents page, axe-clean`, async () => {
    const page = await open(`/${newest}/index.html`);
    let reached = false;
    for (let i = 0; i < 400 && !reached; i++) {
      await page.keyboard.press("Tab");
      reached = await page.evaluate((g) => {
        const a = document.activeElement;
        return a.tagName === "A" && a.getAttribute("href") === g && !!a.closest("main");
      }, guide);
    }
    assert.ok(reached, `no Tab stop on the contents page's link to ${guide}`);
    await Promise.all([page.waitForURL((u) => u.pathname.endsWith(guide)), page.keyboard.press("Enter")]);
    assert.ok((await page.locator("nav.side a[aria-current=page]").getAttribute("href")).endsWith(guide), "the navigation marks the guide");
    assert.ok((await page.locator("main table").count()) >= 1, "the guide's tables");
    assert.deepEqual(await axeViolations(page), []);
    for (const width of [390, 320]) {
      await page.setViewportSize({ width, height: phone.height });
      const overflow = await sidewaysOverflow(page);
      assert.ok(overflow.over <= 0, `${guide} scrolls sideways by ${overflow.over}px at ${width} px: ${overflow.culprits.join(", ")}`);
    }
    await page.screenshot({ path: path.join(shotDir, `phone-guide-${path.basename(guide, ".html")}.png`) });
    assert.deepEqual(page.errors, []);
    await page.close();
  });
}
