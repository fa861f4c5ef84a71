// Headless-browser test of `csi-view ui`: open a message file, read a field's documentation,
// see the secret hidden, edit a value into a spec violation and out of it, save, and reopen the
// saved file in a new server; call memdriver from the page (compose, refuse, send, read the
// response, reuse its id, a NOT_FOUND with the spec's rows), by mouse and by keyboard alone,
// with axe-core and a 320 px viewport in each state. Nothing may be requested outside the
// page's own server. Screenshots go to target/screenshots/ui-*.png.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { launchBrowser, axeViolations, sidewaysOverflow, startMemdriver, here, shotDir } from "./support.mjs";

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
  return startUiWith(["--type", type, f]);
}

// Starts `csi-view ui ARGS` (CSI_ENDPOINT unset: only --endpoint names a plugin); resolves to
// the URL it prints, the child and what it has written (`output()`).
async function startUiWith(args) {
  const env = { ...process.env };
  delete env.CSI_ENDPOINT;
  const child = spawn(bin, ["ui", ...args], { stdio: ["ignore", "pipe", "pipe"], env });
  servers.push(child);
  let stderr = "";
  let stdout = "";
  child.stderr.on("data", (d) => (stderr += d));
  const line = await new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout });
    rl.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`csi-view ui exited ${code}: ${stderr}`)));
  });
  child.stdout.on("data", (d) => (stdout += d));
  assert.match(line, /^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}\/$/);
  return { url: line, child, output: () => line + stdout + stderr };
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


// The focused element, by the key the page re-renders it under (data-focus), else its id, else
// its tag.
const focusKey = (page) => page.evaluate(() => document.activeElement.getAttribute("data-focus") || document.activeElement.id || document.activeElement.tagName.toLowerCase());

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

// --- Calling a plugin from the page -------------------------------------------------------

const SECRET = "hunter2-sent-from-the-page";

// Runs `action` and waits for the status region to say `said` (emptied first, so an earlier
// message cannot answer for this one).
async function act(page, action, said) {
  await page.evaluate(() => { document.getElementById("status").textContent = ""; });
  await action();
  await page.locator("#status", { hasText: said }).waitFor();
}

// Picks `method` by typing it into the filter and pressing Enter.
async function pick(page, method) {
  await page.fill("#method-filter", method);
  await page.press("#method-filter", "Enter");
  await page.locator("#request-heading", { hasText: `${method} request` }).waitFor();
}

// A capability at `at` (added to `list`, or set): a mount access type, SINGLE_NODE_WRITER.
async function fillCapability(page, at, list) {
  if (list) await act(page, () => page.getByRole("button", { name: `Add an element to ${list}` }).click(), `${list} added`);
  else await act(page, () => page.getByRole("button", { name: `Set ${at}`, exact: true }).click(), `${at} added`);
  await act(page, () => page.getByLabel(`${at}.access_type (one of)`).selectOption("mount"), `${at}.mount added`);
  await act(page, () => page.getByRole("button", { name: `Set ${at}.access_mode` }).click(), `${at}.access_mode added`);
  await act(page, () => page.locator(`select[data-path="${at}.access_mode.mode"]`).selectOption("SINGLE_NODE_WRITER"), `${at}.access_mode.mode set`);
}

// The secret memdriver asks for, typed into the request's secrets map: sent, never shown back.
async function fillSecret(page) {
  await page.getByLabel("key of a new secrets entry").fill("password");
  await act(page, () => page.getByRole("button", { name: "Add entry to secrets" }).click(), 'secrets["password"] added');
  const input = page.locator(`input[data-path='secrets["password"]']`);
  assert.equal(await input.getAttribute("type"), "password");
  await input.fill(SECRET);
  await act(page, () => input.press("Enter"), 'secrets["password"] set');
  assert.equal(await input.inputValue(), "", "the secret is not written back into the page");
  assert.equal(await input.getAttribute("placeholder"), "set (hidden)");
}

async function setValue(page, path, value) {
  const input = page.locator(`input[data-path="${path}"]`);
  await input.fill(value);
  await act(page, () => input.press("Enter"), `${path} set`);
}

async function send(page, said) {
  await act(page, () => page.click("#send"), said);
}

// The volumes memdriver holds, asked through the page (ListVolumes).
async function listedVolumes(page) {
  await pick(page, "ListVolumes");
  await send(page, "ListVolumes answered OK");
  return page.locator('#answer code[data-path$=".volume.volume_id"]').allInnerTexts();
}

async function axeClean(page, state) {
  const violations = await axeViolations(page);
  console.log(`axe csi-view ui ${state}: ${violations.length} violation(s)${violations.map((v) => ` ${v.id}/${v.impact}`).join("")}`);
  assert.deepEqual(violations, [], `axe, ${state}`);
}

async function narrowFits(page, state) {
  const size = page.viewportSize();
  await page.setViewportSize({ width: 320, height: 640 });
  const overflow = await sidewaysOverflow(page);
  assert.ok(overflow.over <= 0, `${state}: scrolls sideways by ${overflow.over}px at 320 px: ${overflow.culprits.join(", ")}`);
  await page.setViewportSize(size);
}

test("call memdriver: a request without its REQUIRED name is refused and not sent; CreateVolume answered with a volume id, offered to the next request; NOT_FOUND with the spec's rows", async () => {
  const plugin = await startMemdriver({
    // memdriver's own validation off: a request the page let through without a name would be
    // provisioned, and ListVolumes would show it.
    MEMDRIVER_FAULT: "no-validation",
    MEMDRIVER_REQUIRE_SECRET: `password=${SECRET}`,
    MEMDRIVER_NODE_ID: "node-ui",
  });
  const ui = await startUiWith(["--endpoint", plugin.endpoint]);
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(ui.url).origin });
  try {
    await page.goto(ui.url);
    await page.locator("#method-list option").first().waitFor();
    assert.equal(await page.locator("#plugin").innerText(), `Plugin: ${plugin.endpoint}`);
    // The list is grouped by service and filtered as one types.
    assert.ok(await page.locator('#method-list optgroup[label="csi.v1.Controller"] option[value="/csi.v1.Controller/CreateVolume"]').count());
    await page.fill("#method-filter", "nodepub");
    assert.deepEqual(await page.locator("#method-list option").allInnerTexts(), ["NodePublishVolume"]);
    assert.equal(await page.locator("#method-count").innerText(), "1 method matches “nodepub”; Enter opens NodePublishVolume");
    await page.fill("#method-filter", "csi.v1.Group");
    assert.deepEqual(await page.locator("#method-list optgroup").evaluateAll((g) => g.map((x) => x.label)), ["csi.v1.GroupController"], "a service's name filters too");

    // CreateVolume with a capability and the secret, but no name: refused in the page.
    await pick(page, "CreateVolume");
    await fillCapability(page, "volume_capabilities[0]", "volume_capabilities");
    await fillSecret(page);
    assert.deepEqual(await page.locator("#violations li").evaluateAll((l) => l.map((li) => li.getAttribute("data-path"))), ["name"]);
    await send(page, "refused: 1 spec rule broken; nothing sent");
    assert.deepEqual(await page.locator("#refused-violations li").evaluateAll((l) => l.map((li) => li.getAttribute("data-path"))), ["name"]);
    assert.ok(await page.locator('.field.missing.bad[data-path="name"]').isVisible());
    await page.screenshot({ path: path.join(shotDir, "ui-call-refused.png"), fullPage: true });
    await axeClean(page, "after a refused send");
    await narrowFits(page, "after a refused send");
    // memdriver saw no CreateVolume: it holds no volume.
    assert.deepEqual(await listedVolumes(page), []);

    // Back to CreateVolume (its request kept), the name filled: sent, answered with the volume.
    await pick(page, "CreateVolume");
    assert.equal(await page.locator('select[data-path="volume_capabilities[0].access_mode.mode"]').inputValue(), "SINGLE_NODE_WRITER");
    await setValue(page, "name", "pvc-from-the-page");
    await send(page, "CreateVolume answered OK");
    const volumeId = await page.locator('#answer code[data-path="volume.volume_id"]').innerText();
    assert.match(volumeId, /\S/);
    assert.match(await page.locator("#answer .outcome").innerText(), /^OK, answered in \d+ ms$/);
    assert.ok(await page.locator("#response-violations li.none").isVisible(), "the response breaks no rule");
    await page.screenshot({ path: path.join(shotDir, "ui-call-response.png"), fullPage: true });
    await axeClean(page, "with a response shown");
    await narrowFits(page, "with a response shown");
    // Its id, copied from the response with its button.
    await act(page, () => page.getByRole("button", { name: "Copy volume.volume_id" }).click(), "copied volume.volume_id");
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), volumeId);
    assert.deepEqual(await listedVolumes(page), [volumeId]);

    // ControllerPublishVolume: the volume id is offered; a node memdriver does not know is
    // NOT_FOUND, shown with the rows of the spec's error table.
    await pick(page, "ControllerPublishVolume");
    const idInput = page.locator('input[data-path="volume_id"]');
    const offers = await page.locator(`datalist#${await idInput.getAttribute("list")} option`).evaluateAll((o) => o.map((x) => [x.value, x.label]));
    // Seen last in ListVolumes' answer.
    assert.deepEqual(offers[0], [volumeId, "volume_id of ListVolumes"]);
    await setValue(page, "volume_id", offers[0][0]);
    await setValue(page, "node_id", "node-elsewhere");
    await fillCapability(page, "volume_capability");
    await fillSecret(page);
    await send(page, "ControllerPublishVolume answered NOT_FOUND");
    assert.match(await page.locator("#answer .outcome").innerText(), /^NOT_FOUND \(5\): .*node-elsewhere/);
    assert.equal(await page.locator("#answer h3").innerText(), "What the spec says (ControllerPublishVolume's error table)");
    assert.deepEqual(await page.locator("#answer dl dt:text-is('Condition') + dd").allInnerTexts(), ["Volume does not exist", "Node does not exist"]);
    await page.screenshot({ path: path.join(shotDir, "ui-call-not-found.png"), fullPage: true });
    await axeClean(page, "with a gRPC status shown");
    await narrowFits(page, "with a gRPC status shown");

    // The secret went to memdriver (it answered, not UNAUTHENTICATED) and never came back.
    assert.ok(!(await page.content()).includes(SECRET), "the secret is on the page");
    assert.ok(!ui.output().includes(SECRET), "the secret is in csi-view's output");
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
    ui.child.kill("SIGTERM");
    await plugin.stop();
  }
});

test("without a plugin the page says so, and Send is off with that reason", async () => {
  const ui = await startUiWith([]);
  const page = await context.newPage();
  try {
    await page.goto(ui.url);
    await page.locator("#method-list option").first().waitFor();
    assert.match(await page.locator("#plugin").innerText(), /^no plugin is connected: start csi-view ui with --endpoint/);
    await pick(page, "GetPluginInfo");
    const sendButton = page.locator("#send");
    assert.equal(await sendButton.getAttribute("aria-disabled"), "true");
    assert.match(await page.locator(`#${await sendButton.getAttribute("aria-describedby")}`).innerText(), /^no plugin is connected/);
    // aria-disabled keeps it focusable: Enter on it says why nothing is sent.
    await sendButton.focus();
    await act(page, () => page.keyboard.press("Enter"), "no plugin is connected");
    assert.match(await page.locator("#answer").innerText(), /Nothing sent yet/);
    await axeClean(page, "with no plugin");
  } finally {
    await page.close();
    ui.child.kill("SIGTERM");
  }
});

// Tab (at most `max` times) until the focus is on `key`; fails naming where it stopped.
async function tabTo(page, key, max = 80) {
  let at = "";
  for (let i = 0; i < max && at !== key; i++) {
    await page.keyboard.press("Tab");
    at = await focusKey(page);
  }
  assert.equal(at, key, `Tab reaches ${key}`);
}

test("accessible while calling: keyboard only, pick a method, fill, send, read the response; axe and 320 px in each state", async () => {
  const plugin = await startMemdriver();
  const ui = await startUiWith(["--endpoint", plugin.endpoint]);
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  try {
    await page.goto(ui.url);
    await page.locator("#method-list option").first().waitFor();
    await axeClean(page, "with the call part loaded");

    // Pick CreateVolume: type into the filter, Enter; the focus moves to the request.
    await tabTo(page, "method-filter");
    await page.keyboard.type("CreateVolume");
    await page.keyboard.press("Enter");
    await page.locator("#request-heading").waitFor();
    assert.equal(await focusKey(page), "request-heading");
    await axeClean(page, "with a method picked");
    await narrowFits(page, "with a method picked");

    // The name: Tab to its docs, open them, Tab to its value, type, Tab away: applied, the focus
    // where Tab put it.
    await tabTo(page, "name:name", 3);
    await page.keyboard.press("Enter");
    assert.ok(await page.locator('.field[data-path="name"] > .doc').isVisible(), "Enter opens the field's documentation");
    await page.keyboard.press("Tab");
    assert.equal(await focusKey(page), "value:name");
    await page.keyboard.type("pvc-keyboard");
    await act(page, () => page.keyboard.press("Tab"), "name set; 1 spec rule broken");
    assert.equal(await focusKey(page), "docs:name", "focus kept after the edit");

    // A capability: add an element (the focus goes into it, on its oneof), choose mount with the
    // arrow keys, set access_mode (the focus goes to its mode), choose SINGLE_NODE_WRITER.
    await tabTo(page, "add:volume_capabilities");
    await act(page, () => page.keyboard.press("Enter"), "volume_capabilities added");
    assert.equal(await focusKey(page), "oneof:volume_capabilities[0].access_type");
    await act(page, () => page.keyboard.press("ArrowDown"), "volume_capabilities[0].block added");
    await act(page, () => page.keyboard.press("ArrowDown"), "volume_capabilities[0].mount added");
    assert.equal(await focusKey(page), "oneof:volume_capabilities[0].access_type");
    await tabTo(page, "set:volume_capabilities[0].access_mode");
    await act(page, () => page.keyboard.press("Enter"), "volume_capabilities[0].access_mode added");
    assert.equal(await focusKey(page), "value:volume_capabilities[0].access_mode.mode");
    await act(page, () => page.keyboard.press("ArrowDown"), "access_mode.mode set; no spec rule broken");
    assert.equal(await page.locator('select[data-path="volume_capabilities[0].access_mode.mode"]').inputValue(), "SINGLE_NODE_WRITER");
    await axeClean(page, "with the request filled");
    await narrowFits(page, "with the request filled");

    // Send: the focus stays on Send; the status says it was answered; Tab reaches the response.
    await tabTo(page, "send");
    await act(page, () => page.keyboard.press("Enter"), "CreateVolume answered OK");
    assert.equal(await focusKey(page), "send", "focus kept on Send");
    await tabTo(page, "response:copy:volume.volume_id");
    const volumeId = await page.locator('#answer code[data-path="volume.volume_id"]').innerText();
    assert.match(volumeId, /\S/);
    await page.screenshot({ path: path.join(shotDir, "ui-call-keyboard.png"), fullPage: true });
    await axeClean(page, "with a response shown");
    await narrowFits(page, "with a response shown");

    // Start over, then Send the empty request: refused, the focus still on Send.
    await tabTo(page, "reset");
    await act(page, () => page.keyboard.press("Enter"), "the request emptied; 2 spec rules broken");
    assert.equal(await focusKey(page), "reset");
    await page.keyboard.press("Shift+Tab");
    assert.equal(await focusKey(page), "send");
    await act(page, () => page.keyboard.press("Enter"), "refused: 2 spec rules broken; nothing sent");
    assert.equal(await focusKey(page), "send");
    assert.deepEqual(await page.locator("#refused-violations li").evaluateAll((l) => l.map((li) => li.getAttribute("data-path"))), ["name", "volume_capabilities"]);
    await axeClean(page, "after a refused send");
    await narrowFits(page, "after a refused send");
    await page.setViewportSize({ width: 320, height: 640 });
    await page.screenshot({ path: path.join(shotDir, "ui-call-320.png"), fullPage: true });
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
    ui.child.kill("SIGTERM");
    await plugin.stop();
  }
});
