// Headless-browser test of `csi-view ui`: open a message file, read a field's documentation,
// see the secret hidden, edit a value into a spec violation and out of it, save, and reopen the
// saved file in a new server. Nothing may be requested outside the page's own server.
// Screenshots go to target/screenshots/ui-*.png.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { launchBrowser, axeViolations, sidewaysOverflow, here, shotDir } from "./support.mjs";

const bin = path.resolve(process.env.CSI_VIEW || path.join(here, "..", "target", "debug", "csi-view"));
const TYPE = "csi.v1.CreateVolumeRequest";

let browser, context, work, file;
const servers = [];

function encode(text, type = TYPE) {
  return execFileSync(bin, ["encode", "--type", type, "--to", "hex"], { input: text });
}

function decoded(f) {
  return execFileSync(bin, ["decode", "--type", TYPE, "--show-secrets", "--no-annotations", f]).toString();
}

// Starts `csi-view ui` on `f`; resolves to the URL it prints.
async function startUi(f, type = TYPE) {
  const child = spawn(bin, ["ui", "--type", type, f], { stdio: ["ignore", "pipe", "pipe"] });
  servers.push(child);
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const line = await new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout });
    rl.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`csi-view ui exited ${code}: ${stderr}`)));
  });
  assert.match(line, /^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}\/$/);
  return { url: line, child };
}

before(async () => {
  assert.ok(fs.existsSync(bin), `no csi-view at ${bin}: cargo build -p csi-view first`);
  fs.mkdirSync(shotDir, { recursive: true });
  work = fs.mkdtempSync(path.join(os.tmpdir(), "csi-view-ui-"));
  file = path.join(work, "create.hex");
  fs.writeFileSync(file, encode(
    'name: "pvc-1" capacity_range { required_bytes: 1024 } ' +
    'volume_capabilities { mount {} access_mode { mode: SINGLE_NODE_WRITER } } ' +
    'secrets { key: "password" value: "hunter2-ui" }'));
  browser = await launchBrowser((u) => u.startsWith("http://127.0.0.1:"));
  context = browser.context;
});

after(async () => {
  await browser?.close();
  for (const s of servers) s.kill("SIGTERM");
  if (work) fs.rmSync(work, { recursive: true, force: true });
  assert.deepEqual(browser?.foreign ?? [], [], "the page requested something outside its server");
});

test("nothing is reachable without the token", async () => {
  const { url, child } = await startUi(file);
  const origin = new URL(url).origin;
  for (const p of ["/", "/api/state", "/00000000000000000000000000000000/api/state"]) {
    const r = await fetch(origin + p);
    assert.equal(r.status, 404, p);
  }
  assert.equal((await fetch(url + "api/state")).status, 200);
  child.kill("SIGTERM");
});

test("open, read a field's doc, edit into a violation and out, save, reopen", async () => {
  const { url, child } = await startUi(file);
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(url);
  const name = page.locator('.field[data-path="name"]');
  await name.waitFor();
  assert.equal(await page.locator('input[data-path="name"]').inputValue(), "pvc-1");

  // The field's documentation, from the spec, one click away; a link into the docs site.
  await name.locator(":scope > .row .name").click();
  assert.equal(await name.locator(":scope > .row .name").getAttribute("aria-expanded"), "true");
  const doc = name.locator(":scope > .doc");
  assert.ok(await doc.isVisible());
  assert.match(await doc.innerText(), /Idempotency/);
  assert.match(await name.locator(":scope > .row a.docs").getAttribute("href"), /\/en\/ref\/csi\.v1\.CreateVolumeRequest\.html#name$/);

  // The secret is hidden.
  assert.ok(!(await page.content()).includes("hunter2-ui"), "the secret is on the page");
  assert.equal(await page.locator('input[data-path=\'secrets["password"]\']').inputValue(), "<redacted>");
  await page.screenshot({ path: path.join(shotDir, "ui-open.png") });

  // An edit that breaks a rule shows the violation; fixing it clears it.
  const bytes = page.locator('input[data-path="capacity_range.required_bytes"]');
  await bytes.fill("-5");
  await bytes.press("Enter");
  await page.locator("#violations li", { hasText: "capacity_range.required_bytes" }).waitFor();
  assert.ok(await page.locator('.field.bad[data-path="capacity_range.required_bytes"]').isVisible());
  await page.screenshot({ path: path.join(shotDir, "ui-violation.png") });
  await bytes.fill("2048");
  await bytes.press("Enter");
  await page.locator("#violations li.none").waitFor();
  const nameInput = page.locator('input[data-path="name"]');
  await nameInput.fill("pvc-2");
  await nameInput.press("Enter");
  await page.locator("#status", { hasText: "name set" }).waitFor();

  // Save: atomically, the original kept as FILE.bak, the secret kept as it was.
  const original = fs.readFileSync(file);
  await page.click("#save");
  await page.locator("#status", { hasText: "saved" }).waitFor();
  await page.screenshot({ path: path.join(shotDir, "ui-saved.png") });
  assert.deepEqual(fs.readFileSync(file + ".bak"), original);
  const saved = decoded(file);
  assert.match(saved, /name: "pvc-2"/);
  assert.match(saved, /required_bytes: 2048/);
  assert.match(saved, /value: "hunter2-ui"/);
  assert.deepEqual(errors, []);
  await page.close();
  child.kill("SIGTERM");

  // Reopen the saved file in a new server: the edits are there.
  const again = await startUi(file);
  const page2 = await context.newPage();
  await page2.goto(again.url);
  await page2.locator('input[data-path="name"]').waitFor();
  assert.equal(await page2.locator('input[data-path="name"]').inputValue(), "pvc-2");
  assert.equal(await page2.locator('input[data-path="capacity_range.required_bytes"]').inputValue(), "2048");
  await page2.screenshot({ path: path.join(shotDir, "ui-reopened.png") });
  await page2.close();
  again.child.kill("SIGTERM");
});

test("a pasted hex message opens with its secret hidden", async () => {
  const { url, child } = await startUi(file);
  const page = await context.newPage();
  await page.goto(url);
  await page.locator('.field[data-path="name"]').waitFor();
  await page.fill("#paste-text", encode('name: "pasted" secrets { key: "k" value: "pasted-secret" } volume_capabilities { block {} access_mode { mode: SINGLE_NODE_WRITER } }').toString());
  await page.click("#paste");
  await page.locator('input[data-path="name"]', { hasText: "" }).first().waitFor();
  await page.waitForFunction(() => document.querySelector('input[data-path="name"]')?.value === "pasted");
  assert.ok(!(await page.content()).includes("pasted-secret"), "a pasted secret is on the page");
  await page.screenshot({ path: path.join(shotDir, "ui-pasted.png") });
  await page.close();
  child.kill("SIGTERM");
});


// The focused element, by the key the page re-renders it under (data-focus), else its tag.
const focusKey = (page) => page.evaluate(() => document.activeElement.getAttribute("data-focus") || document.activeElement.tagName.toLowerCase());

test("accessible: axe finds nothing loaded, edited, with a violation and an error; keyboard only", async () => {
  const { url, child } = await startUi(file);
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(url);
  await page.locator('.field[data-path="name"]').waitFor();
  const axe = async (state) => {
    const violations = await axeViolations(page);
    console.log(`axe csi-view ui ${state}: ${violations.length} violation(s)${violations.map((v) => ` ${v.id}/${v.impact}`).join("")}`);
    assert.deepEqual(violations, [], `axe, ${state}`);
  };
  await axe("loaded");
  assert.equal(await page.locator('meta[name="viewport"]').count(), 1);

  // Each docs link says which field it documents.
  const names = await page.locator("a.docs").evaluateAll((links) => links.map((a) => a.textContent));
  assert.equal(new Set(names).size, names.length, `docs links share a name: ${names}`);
  assert.equal(await page.getByRole("link", { name: "docs for capacity_range.required_bytes (opens in a new tab)" }).count(), 1);

  // From the top of the page, Tab to the field name, open its documentation with Enter.
  let key = "";
  for (let i = 0; i < 60 && key !== "name:name"; i++) {
    await page.keyboard.press("Tab");
    key = await focusKey(page);
  }
  assert.equal(key, "name:name", "the field name is a Tab stop");
  await page.keyboard.press("Enter");
  const doc = page.locator('.field[data-path="name"] > .doc');
  assert.ok(await doc.isVisible(), "Enter opens the field's documentation");
  assert.equal(await page.locator('.field[data-path="name"] > .row .name').getAttribute("aria-expanded"), "true");
  // Tab to its value, type a new one, Tab away: the edit is applied and the focus is where Tab
  // put it (the field's docs link), not on the body; the documentation stays open.
  await page.keyboard.press("Tab");
  assert.equal(await focusKey(page), "value:name");
  await page.keyboard.press("Control+A");
  await page.keyboard.type("pvc-k");
  await page.keyboard.press("Tab");
  await page.locator("#status", { hasText: "name set; no spec rule broken" }).waitFor();
  assert.equal(await focusKey(page), "docs:name", "focus kept after the re-render");
  assert.ok(await doc.isVisible(), "the documentation stays open");
  await page.keyboard.press("Shift+Tab");
  assert.equal(await focusKey(page), "value:name");
  assert.equal(await page.locator('input[data-path="name"]').inputValue(), "pvc-k");
  await axe("edited");
  // Save from the keyboard: the button keeps the focus once there is nothing left to save.
  const save = page.locator("#save");
  assert.equal(await save.getAttribute("aria-disabled"), "false");
  await save.focus();
  await page.keyboard.press("Enter");
  await page.locator("#status", { hasText: "saved" }).waitFor();
  assert.equal(await save.getAttribute("aria-disabled"), "true");
  assert.equal(await page.evaluate(() => document.activeElement.id), "save", "focus stays on Save");
  await page.keyboard.press("Enter");
  assert.match(await page.locator("#status").innerText(), /^saved/, "a second Enter does nothing");
  await page.locator('input[data-path="name"]').focus();

  // Enter after an edit keeps the focus on the edited control.
  for (let i = 0; i < 20 && key !== "value:capacity_range.required_bytes"; i++) {
    await page.keyboard.press("Tab");
    key = await focusKey(page);
  }
  assert.equal(key, "value:capacity_range.required_bytes");
  await page.keyboard.press("Control+A");
  await page.keyboard.type("-5");
  await page.keyboard.press("Enter");
  await page.locator("#violations li", { hasText: "capacity_range.required_bytes" }).waitFor();
  assert.equal(await focusKey(page), "value:capacity_range.required_bytes", "focus kept after Enter");
  await axe("with a violation shown");
  await page.keyboard.press("Control+A");
  await page.keyboard.type("many");
  await page.keyboard.press("Enter");
  await page.locator("#status.error").waitFor();
  assert.equal(await focusKey(page), "value:capacity_range.required_bytes");
  await axe("with an error shown");
  await page.screenshot({ path: path.join(shotDir, "ui-keyboard.png") });

  // A narrow screen: nothing scrolls sideways.
  await page.setViewportSize({ width: 320, height: 640 });
  const overflow = await sidewaysOverflow(page);
  assert.ok(overflow.over <= 0, `scrolls sideways by ${overflow.over}px at 320 px: ${overflow.culprits.join(", ")}`);
  await page.screenshot({ path: path.join(shotDir, "ui-320.png"), fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
  child.kill("SIGTERM");
});

test("a REQUIRED bool left false is a value, not missing: the tree and the rules agree", async () => {
  const type = "csi.v1.NodePublishVolumeRequest";
  const f = path.join(work, "publish.hex");
  fs.writeFileSync(f, encode('volume_id: "v" target_path: "/t" volume_capability { mount {} access_mode { mode: SINGLE_NODE_WRITER } }', type));
  const { url, child } = await startUi(f, type);
  const page = await context.newPage();
  await page.goto(url);
  await page.locator('.field[data-path="readonly"]').waitFor();
  assert.equal(await page.locator('input[data-path="readonly"]').inputValue(), "false");
  assert.equal(await page.locator(".field.missing").count(), 0);
  assert.ok(await page.locator("#violations li.none").isVisible(), "no spec rule broken");
  // Clearing a REQUIRED string: missing in the tree and in the rules, the same path.
  const id = page.locator('input[data-path="volume_id"]');
  await id.fill("");
  await id.press("Enter");
  await page.locator('#violations li[data-path="volume_id"]').waitFor();
  assert.deepEqual(await page.locator(".field.missing").evaluateAll((fs) => fs.map((f) => f.getAttribute("data-path"))), ["volume_id"]);
  await page.close();
  child.kill("SIGTERM");
});
