// Shared by the browser tests: headless Debian Chromium through playwright-core, with every
// request outside the pages' own server recorded; the rendered site served from 127.0.0.1;
// memdriver (the reference plugin) on a unix socket for csi-view ui to call; and axe-core (pinned
// in package.json) run inside a page, its default rule set, every impact level.
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const here = path.dirname(fileURLToPath(import.meta.url));
export const siteDir = path.resolve(process.env.DOCS_SITE || path.join(here, "..", "target", "site"));
export const shotDir = path.resolve(process.env.SCREENSHOT_DIR || path.join(here, "..", "target", "screenshots"));

// Release folder names (vX.Y.Z) among `names`, oldest first.
function releasesInOrder(names) {
  const key = (name) => name.slice(1).split(".").map(Number);
  const releases = names.filter((n) => /^v\d+\.\d+\.\d+$/.test(n));
  releases.sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
  });
  return releases;
}

// The newest English release edition of the rendered site (the site's default), from its folders:
// a release added to the corpus needs no edit of the tests.
export function newestRelease(dir = siteDir) {
  return releasesInOrder(fs.readdirSync(path.join(dir, "en"))).at(-1);
}

// The corpus `cargo xtask docs` read: CSIKIT_CORPUS, else the nearest shared/corpus above the checkout.
export function corpusDir() {
  if (process.env.CSIKIT_CORPUS) return path.resolve(process.env.CSIKIT_CORPUS);
  for (let dir = path.resolve(here, ".."); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "shared", "corpus");
    if (fs.existsSync(path.join(candidate, "csi-spec"))) return candidate;
    if (path.dirname(dir) === dir) throw new Error("no corpus: set CSIKIT_CORPUS");
  }
}

// The newest release of the corpus listing whose spec.md is there (a release present as its
// csi.proto alone has no prose and no error tables).
export function newestReleaseWithSpec() {
  const specs = path.join(corpusDir(), "csi-spec");
  return releasesInOrder(fs.readdirSync(specs).filter((n) => fs.existsSync(path.join(specs, n, "spec.md")))).at(-1);
}
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const types = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".png": "image/png" };
const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

// A persistent Chromium context (`options` added to its launch options, e.g. javaScriptEnabled);
// `foreign` collects every request `allowed` refuses.
export async function launchBrowser(allowed, options = {}) {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "csikit-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    viewport: { width: 1366, height: 900 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    ...options,
  });
  const foreign = [];
  context.on("request", (req) => {
    const u = req.url();
    if (!allowed(u) && !u.startsWith("data:") && !u.startsWith("about:")) foreign.push(u);
  });
  const close = async () => {
    await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  };
  return { context, foreign, close };
}

// Serves `dir` on 127.0.0.1 at a port the kernel picks; resolves to its origin and a close.
export async function serveSite(dir = siteDir) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    const file = path.join(dir, path.normalize(decodeURIComponent(url.pathname)).replace(/^([/\\])+/, ""));
    if (!file.startsWith(dir) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": types[path.extname(file)] || "application/octet-stream" });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

// memdriver, as `cargo test --workspace` (or `cargo build -p memdriver`) built it.
export const memdriverBin = path.resolve(process.env.MEMDRIVER || path.join(here, "..", "target", "debug", "memdriver"));

// Starts memdriver with `env` on a socket in a new directory; resolves once the socket is there
// to its endpoint, its stderr so far (`log()`) and `stop()` (SIGTERM, awaited, directory removed).
export async function startMemdriver(env = {}) {
  if (!fs.existsSync(memdriverBin)) throw new Error(`no memdriver at ${memdriverBin}: cargo build -p memdriver first`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "csikit-memdriver-"));
  const socket = path.join(dir, "csi.sock");
  const child = spawn(memdriverBin, [], { env: { ...process.env, CSI_ENDPOINT: `unix://${socket}`, RUST_LOG: "info", ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr.on("data", (d) => (log += d));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  // The socket appears in the directory: wait for that event (or for memdriver to exit).
  const watcher = fs.watch(dir);
  try {
    await Promise.race([
      new Promise((resolve) => {
        watcher.on("change", () => fs.existsSync(socket) && resolve());
        if (fs.existsSync(socket)) resolve();
      }),
      exited.then((code) => { throw new Error(`memdriver exited ${code} before listening: ${log}`); }),
    ]);
  } finally {
    watcher.close();
  }
  return {
    endpoint: `unix://${socket}`,
    log: () => log,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// axe-core's violations on the page as it is now: [{id, impact, help, targets}].
export async function axeViolations(page) {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.addScriptTag({ content: axeSource });
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ["violations"] }));
  return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(" ")).slice(0, 5) }));
}

// How far the page is wider than its viewport (0 when nothing scrolls sideways), and the widest
// elements that stick out, to name in a failure.
export async function sidewaysOverflow(page) {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const over = document.documentElement.scrollWidth - width;
    // The innermost elements past the right edge: the ones to fix.
    const clipped = (el) => {
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) if (getComputedStyle(p).overflowX !== "visible") return true;
      return false;
    };
    const out = over > 0 ? [...document.querySelectorAll("body *")].filter((el) => el.getBoundingClientRect().right > width + 0.5 && !clipped(el)) : [];
    const culprits = out.filter((el) => !out.some((o) => o !== el && el.contains(o))).slice(0, 5).map((el) =>
      `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}${typeof el.className === "string" && el.className ? "." + el.className.trim().split(/\s+/).join(".") : ""} (${Math.round(el.getBoundingClientRect().right)}px)`);
    return { over, culprits };
  });
}
