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
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.resolve(process.env.CSI_VIEW || path.join(here, "..", "target", "debug", "csi-view"));
const shotDir = path.resolve(process.env.SCREENSHOT_DIR || path.join(here, "..", "target", "screenshots"));
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const TYPE = "csi.v1.CreateVolumeRequest";

let context, userDataDir, work, file;
const foreign = [];
const servers = [];

function encode(text) {
  return execFileSync(bin, ["encode", "--type", TYPE, "--to", "hex"], { input: text });
}

function decoded(f) {
  return execFileSync(bin, ["decode", "--type", TYPE, "--show-secrets", "--no-annotations", f]).toString();
}

// Starts `csi-view ui` on `f`; resolves to the URL it prints.
async function startUi(f) {
  const child = spawn(bin, ["ui", "--type", TYPE, f], { stdio: ["ignore", "pipe", "pipe"] });
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
    if (!u.startsWith("http://127.0.0.1:") && !u.startsWith("data:") && !u.startsWith("about:")) foreign.push(u);
  });
});

after(async () => {
  await context?.close();
  for (const s of servers) s.kill("SIGTERM");
  if (userDataDir) fs.rmSync(userDataDir, { recursive: true, force: true });
  if (work) fs.rmSync(work, { recursive: true, force: true });
  assert.deepEqual(foreign, [], "the page requested something outside its server");
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
