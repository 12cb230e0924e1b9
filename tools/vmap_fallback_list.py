"""Rewrite the list, in docs/architecture.md, of the public ops that vmap runs once per example (those without a
batching rule: ``func._dispatch.ops_without_rules()``). ``tests/test_func_vmap.py`` keeps the two equal; run this
after adding an op without a batching rule.

    python tools/vmap_fallback_list.py
"""
import os
import re
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "architecture.md")


def main():
    sys.path.insert(0, os.path.join(ROOT, "src"))
    from gradiente.func import _dispatch
    names = ", ".join(f"`{name}`" for name in _dispatch.ops_without_rules())
    body = "\n".join(textwrap.wrap(names, 120, break_long_words=False, break_on_hyphens=False))
    with open(DOC, encoding="utf-8") as f:
        doc = f.read()
    doc = re.sub(r"(<!-- fallback-list -->\n).*?(\n<!-- /fallback-list -->)", lambda m: m.group(1) + body + m.group(2),
                 doc, flags=re.S)
    with open(DOC, "w", encoding="utf-8") as f:
        f.write(doc)


if __name__ == "__main__":
    main()
