#!/usr/bin/env python3
"""cli::report's DOM check: the page (or Chromium's --dump-dom of it) holds
only the elements and attributes planner report writes -- no script, no event
handler, no element a checkpoint string brought in. Prints each stranger and
exits 1 when there is one. Usage: dom_check.py PAGE.html"""
import sys
from html.parser import HTMLParser

TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "b", "i",
        "section", "svg", "rect", "text", "g", "line", "figure", "figcaption", "div",
        "table", "tbody", "tr", "th", "td"}
ATTRS = {"lang", "charset", "class", "id", "x", "y", "width", "height", "fill", "role",
         "aria-label", "data-kind", "data-stage", "data-category", "data-link", "x1", "y1",
         "x2", "y2", "stroke", "stroke-width"}


class Check(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.strangers = []

    def handle_starttag(self, tag, attrs):
        if tag not in TAGS:
            self.strangers.append(f"element <{tag}>")
        for name, value in attrs:
            if name not in ATTRS or name.startswith("on"):
                self.strangers.append(f"attribute {name}={value!r} on <{tag}>")
            elif value and "javascript:" in value.lower():
                self.strangers.append(f"a javascript: URL in {name} on <{tag}>")

    handle_startendtag = handle_starttag


c = Check()
with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
    c.feed(f.read())
c.close()
for s in c.strangers[:10]:
    print(f"{sys.argv[1]}: {s}")
if len(c.strangers) > 10:
    print(f"{sys.argv[1]}: ... {len(c.strangers) - 10} more")
sys.exit(1 if c.strangers else 0)
