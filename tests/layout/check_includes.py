#!/usr/bin/env python3
"""check_includes.py ROOT: every #include "..." of the project's folders obeys
the include rules of docs/ARCHITECTURE.md (the table between the
<!-- include-rules --> markers, read from the document itself so that the
rule and its check cannot drift apart):

- "folder/name.h" names the file's own folder or one its row allows;
- "name.h" names a file in the including file's own folder (no folder is on
  the include path for another; generated headers are listed below);
- every folder with C sources has a row, the rows name existing folders,
  and the allowed-folder graph has no cycle (no folder includes one above
  it). tests/, bench/ and samples/ may include anything.

Prints one line per violation (file:line: what) and exits 1 if there is any.
"""
import os
import re
import sys

FREE = {"tests", "bench", "samples"}           # may include anything
GENERATED = {"commands.inc"}                   # made by the build (tools/)
SOURCES = (".c", ".h", ".cu", ".def", ".inc")
SKIP_DIRS = {"build", "docs", "scripts", ".git", ".ci"}


def read_rules(root, problems):
    path = os.path.join(root, "docs", "ARCHITECTURE.md")
    text = open(path, encoding="utf-8").read()
    m = re.search(r"<!-- include-rules.*?-->(.*?)<!-- /include-rules -->", text, re.S)
    if not m:
        problems.append(f"{path}: no include-rules table")
        return {}
    rules = {}
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].startswith("`"):
            continue
        folder = cells[0].strip("`").rstrip("/")
        rules[folder] = {x.rstrip("/") for x in re.findall(r"`([a-z_]+)/`", cells[1])}
    return rules


def cycle(rules):
    state = {}

    def visit(f, trail):
        if state.get(f) == 1:
            return trail + [f]
        if state.get(f) == 2:
            return None
        state[f] = 1
        for g in sorted(rules.get(f, ())):
            c = visit(g, trail + [f])
            if c:
                return c
        state[f] = 2
        return None

    for f in sorted(rules):
        c = visit(f, [])
        if c:
            return c
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    problems = []
    rules = read_rules(root, problems)
    folders = {d for d in os.listdir(root)
               if os.path.isdir(os.path.join(root, d)) and d not in SKIP_DIRS
               and not d.startswith(".") and not d.startswith("build")}
    for f in sorted(rules):
        if f not in folders and f != "optimize":
            problems.append(f"docs/ARCHITECTURE.md: rule for {f}/, which does not exist")
        for g in rules[f]:
            if g not in rules:
                problems.append(f"docs/ARCHITECTURE.md: {f}/ may include {g}/, which has no rule")
    c = cycle(rules)
    if c:
        problems.append("docs/ARCHITECTURE.md: the include rules have a cycle: " +
                        " -> ".join(x + "/" for x in c))
    project = set(rules) | FREE
    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    checked = 0
    for top in sorted(folders):
        if top in FREE:
            continue
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for name in sorted(filenames):
                if not name.endswith(SOURCES):
                    continue
                if top not in rules:
                    problems.append(f"{top}/: C sources but no row in docs/ARCHITECTURE.md's "
                                    "include rules")
                    break
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                    m = include.match(line)
                    if not m:
                        continue
                    checked += 1
                    target = m.group(1)
                    if "/" in target:
                        first = target.split("/")[0]
                        if first in project and first != top and first not in rules[top]:
                            problems.append(f"{rel}:{n}: includes {target}: {top}/ may include "
                                            + (", ".join(sorted(x + "/" for x in rules[top]))
                                               or "nothing") + " (docs/ARCHITECTURE.md)")
                        elif first not in project and not os.path.exists(
                                os.path.join(dirpath, target)):
                            problems.append(f"{rel}:{n}: includes {target}, which is no project "
                                            "folder's header")
                    elif target not in GENERATED and not os.path.exists(
                            os.path.join(dirpath, target)):
                        problems.append(f"{rel}:{n}: includes \"{target}\", which is not in "
                                        f"{os.path.relpath(dirpath, root)}/ (include other "
                                        "folders' headers as \"folder/name.h\")")
    for p in problems:
        print(p)
    print(f"check_includes: {checked} includes in {len(rules)} ruled folders, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
