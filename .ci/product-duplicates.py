#!/usr/bin/env python3
"""Counts repeated code in the product sources alone, so anyone can recount the issue's measure.

Copies each workspace member's `src/` and `templates/` into a temporary folder, leaving out what is
not product code: `generated/` and `build/src/csi_proto.rs` (written by `cargo xtask generate`),
`tests/`, `benches/`, `fuzz/`, and every item under `#[cfg(test)]` (an inline `mod tests { ... }`
is blanked out of its file, its lines kept so line numbers stay true; a `#[cfg(test)] mod name;`
leaves its file out). Then runs `duplicates` on the copy and prints its rows, paths relative to the
workspace root.

    python3 .ci/product-duplicates.py [--keep DIR] [-- DUPLICATES_ARGS...]

`--keep DIR` writes the copy to DIR (which must not exist) and keeps it; the arguments after `--`
go to `duplicates` (default `--most 50`). Exit 0 always, as `duplicates` does: a row is a place
to look, not a verdict.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
GENERATED = {"generated", "build/src/csi_proto.rs"}
LEFT_OUT_PARTS = {"tests", "benches", "fuzz", "target", "node_modules"}
TEST_CFG = re.compile(r"#\[cfg\(\s*(test|all\(\s*test\b[^\]]*)\s*\)\]")


def members():
    with open(os.path.join(ROOT, "Cargo.toml"), "rb") as f:
        return tomllib.load(f)["workspace"]["members"]


def tokens_end(text, i):
    """The index just past the comment, string or character literal starting at i, or None."""
    if text.startswith("//", i):
        end = text.find("\n", i)
        return len(text) if end < 0 else end
    if text.startswith("/*", i):
        depth, j = 1, i + 2
        while j < len(text) and depth:
            if text.startswith("/*", j):
                depth, j = depth + 1, j + 2
            elif text.startswith("*/", j):
                depth, j = depth - 1, j + 2
            else:
                j += 1
        return j
    raw = re.match(r'b?r(#*)"', text[i:])
    if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
        close = '"' + raw.group(1)
        end = text.find(close, i + raw.end())
        return len(text) if end < 0 else end + len(close)
    if text[i] == '"' or text.startswith('b"', i):
        j = i + (2 if text[i] == "b" else 1)
        while j < len(text) and text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        return j + 1
    if text[i] == "'":
        # A character literal ('a', '\n', '\u{1F600}'), not a lifetime ('a).
        ch = re.match(r"'(\\(u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'])'", text[i:], re.S)
        if ch:
            return i + ch.end()
    return None


def cut_test_items(text):
    """The text without the items under #[cfg(test)], and the names of `mod name;` items cut."""
    out, cut_mods, i, start = [], [], 0, 0
    while i < len(text):
        end = tokens_end(text, i)
        if end is not None:
            i = end
            continue
        attr = TEST_CFG.match(text, i)
        if not attr:
            i += 1
            continue
        # The item after the attribute (and any further attributes): to its `;` or its braces.
        j, depth = attr.end(), 0
        while j < len(text):
            end = tokens_end(text, j)
            if end is not None:
                j = end
                continue
            c = text[j]
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
            elif c == ";" and depth == 0:
                j += 1
                break
            elif c == "{" and depth == 0:
                j = match_brace(text, j)
                break
            j += 1
        item = text[attr.end():j]
        named = re.search(r"\bmod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;", item)
        if named:
            cut_mods.append(named.group(1))
        # Newlines kept, so the lines duplicates names are the lines of the real file.
        out.append(text[start:i] + "\n" * text.count("\n", i, j))
        start = i = j
    out.append(text[start:])
    return "".join(out), cut_mods


def match_brace(text, i):
    """The index just past the brace that closes the one at i."""
    depth = 0
    while i < len(text):
        end = tokens_end(text, i)
        if end is not None:
            i = end
            continue
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def module_dir(path):
    """Where the modules a Rust file declares live."""
    folder, name = os.path.split(path)
    if name in ("lib.rs", "main.rs", "mod.rs"):
        return folder
    return os.path.join(folder, name[:-3])


def copy_product(dest):
    files, left_out = [], set()
    for member in members():
        if "tests" in member.split("/"):
            continue  # a test crate (build/tests/myaddon)
        for top in ("src", "templates"):
            base = os.path.join(ROOT, member, top)
            for folder, dirs, names in os.walk(base):
                dirs[:] = sorted(d for d in dirs if d not in LEFT_OUT_PARTS)
                for name in sorted(names):
                    files.append(os.path.relpath(os.path.join(folder, name), ROOT))
    files = [f for f in files if not any(f == g or f.startswith(g + "/") for g in GENERATED)]
    texts = {}
    for rel in files:
        with open(os.path.join(ROOT, rel), "rb") as f:
            data = f.read()
        if rel.endswith(".rs"):
            text, cut = cut_test_items(data.decode("utf-8"))
            for m in cut:
                d = module_dir(rel)
                left_out.update({os.path.join(d, m + ".rs"), os.path.join(d, m, "mod.rs")})
            data = text.encode("utf-8")
        texts[rel] = data
    kept = 0
    for rel, data in texts.items():
        if rel in left_out:
            continue
        target = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)
        kept += 1
    return kept


def main(argv):
    keep, extra = None, ["--most", "50"]
    if "--" in argv:
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1:]
    if argv[:1] == ["--keep"] and len(argv) == 2:
        keep = argv[1]
    elif argv:
        sys.exit(__doc__)
    dest = keep or tempfile.mkdtemp(prefix="csikit-product-")
    if keep:
        os.makedirs(dest)
    try:
        kept = copy_product(dest)
        where = dest if keep else "a temporary folder"
        print(f"# product sources: {kept} files copied to {where}", flush=True)
        subprocess.run(["duplicates", "--repo", dest, *extra], check=False)
    finally:
        if not keep:
            shutil.rmtree(dest)


if __name__ == "__main__":
    main(sys.argv[1:])
