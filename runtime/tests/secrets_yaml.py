"""Reads csi-sanity secrets files as csi-sanity's go-yaml v2 reads them into
map[string]map[string]string, through PyYAML's composer: a scalar's value is its text
as written (quotes and escapes taken off), a null is the empty string. Prints one JSON
line per file: the mapping, or {"error": ...}."""
import json
import sys

import yaml


def scalar(node):
    if not isinstance(node, yaml.ScalarNode):
        raise ValueError("not a scalar")
    if node.tag == "tag:yaml.org,2002:null" and node.style is None:
        return ""
    return node.value


def read(text):
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    out = {}
    if root is None:
        return out
    if not isinstance(root, yaml.MappingNode):
        raise ValueError("not a mapping")
    for k, v in root.value:
        kind = scalar(k)
        if isinstance(v, yaml.ScalarNode) and scalar(v) == "":
            out.setdefault(kind, {})
            continue
        if not isinstance(v, yaml.MappingNode):
            raise ValueError("a kind that is not a mapping")
        m = out.setdefault(kind, {})
        for sk, sv in v.value:
            m[scalar(sk)] = scalar(sv)
    return out


for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        print(json.dumps(read(text), sort_keys=True))
    except Exception as e:  # noqa: BLE001 - any refusal is an answer
        print(json.dumps({"error": str(e).splitlines()[0] if str(e) else type(e).__name__}))
