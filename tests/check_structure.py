#!/usr/bin/env python3
"""check_structure.py SRC OBJ_DIR: the house rules of the tree (docs/DESIGN.md), checked:
- no two library files include each other, directly or around a circle;
- no two library object files call (or reference) each other, directly or around a circle
  (from `nm` of OBJ_DIR's object files);
- nothing in ops/cuda includes engine/cuda, nothing below engine/ includes engine/;
- no getenv in engine/, ops/, loaders/, kernels/, core/; no attr_get_* in ops/cuda.
Exits 1 naming every violation."""
import collections
import glob
import os
import re
import subprocess
import sys

src, obj_dir = sys.argv[1], sys.argv[2]
problems = []
lib_dirs = ["core", "engine", "ops", "loaders", "kernels", "include"]

def sources():
    for d in lib_dirs:
        for dp, _, fn in os.walk(os.path.join(src, d)):
            for f in fn:
                if f.endswith((".c", ".h", ".cu", ".cuh")):
                    yield os.path.join(dp, f)

def cycles(edges):
    idx, low, st, on, out, c = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)
    def visit(v):
        idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
        for w in edges.get(v, ()):
            if w not in idx:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            comp = []
            while True:
                w = st.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1: out.append(sorted(comp))
    for v in list(edges):
        if v not in idx: visit(v)
    return out

inc = collections.defaultdict(set)
for p in sources():
    rel = os.path.relpath(p, src)
    text = open(p, encoding="utf-8", errors="replace").read()
    for m in re.finditer(r'#include "([^"]+)"', text):
        q = os.path.normpath(os.path.join(os.path.dirname(p), m.group(1)))
        if os.path.exists(q):
            inc[rel].add(os.path.relpath(q, src))
    top = rel.split(os.sep)[0]
    for q in inc[rel]:
        if rel.startswith("ops/cuda") and q.startswith("engine/cuda"):
            problems.append("%s includes %s (ops/cuda must not reach into engine/cuda)" % (rel, q))
        if top in ("core", "ops", "loaders", "kernels", "include") and q.startswith("engine/"):
            problems.append("%s includes %s (below engine/, nothing includes it)" % (rel, q))
    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
    if re.search(r"\bgetenv\s*\(", code):
        problems.append("%s calls getenv (settings come through infer_options)" % rel)
    if rel.startswith("ops/cuda") and re.search(r"\battr_get_\w+\s*\(", code):
        problems.append("%s calls attr_get_* (the GPU side reads the parsed params)" % rel)
for c in cycles(inc):
    problems.append("include circle: " + " -> ".join(c))

objs = glob.glob(os.path.join(obj_dir, "**", "*.o"), recursive=True)
if not objs:
    problems.append("no object files under %s" % obj_dir)
defs, undef = {}, collections.defaultdict(set)
for o in objs:
    name = os.path.relpath(o, obj_dir)
    for line in subprocess.run(["nm", o], capture_output=True, text=True).stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TDRBC":
            defs[f[2]] = name
        elif len(f) == 2 and f[0] == "U":
            undef[name].add(f[1])
calls = collections.defaultdict(set)
for f, us in undef.items():
    for u in us:
        if u in defs and defs[u] != f:
            calls[f].add(defs[u])
for c in cycles(calls):
    problems.append("files calling each other: " + " -> ".join(c))

for p in problems:
    print("FAIL", p)
print("check_structure: %d include edges, %d object files, %d problems" %
      (sum(len(v) for v in inc.values()), len(objs), len(problems)))
sys.exit(1 if problems else 0)
