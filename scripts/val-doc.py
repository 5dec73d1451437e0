#!/usr/bin/env python3
"""Regenerates the generated sections of VALIDATION.md (between `<!-- gen:NAME -->` and
`<!-- /gen:NAME -->`) from `coopmat val --list-rules` and scripts/val-compare.py.
Usage: scripts/val-doc.py [--coopmat PATH]"""

import argparse
import collections
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--coopmat", default=os.path.join(ROOT, "target", "debug", "coopmat"))
    a = ap.parse_args()
    rules = [l.split("\t") for l in subprocess.run([a.coopmat, "val", "--list-rules"], capture_output=True, text=True, check=True).stdout.splitlines()]
    cmp_md = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "val-compare.py"), "--coopmat", a.coopmat], capture_output=True, text=True, check=True).stdout
    lines = cmp_md.splitlines()
    summary = lines[:2]
    rows = []
    for l in lines:
        if l.startswith("| negative/") or l.startswith("| positive/") or l.startswith("| glsl/"):
            cells = [c.strip() for c in l.strip("|").split(" | ")]
            rows.append(cells)
    per_rule = collections.defaultdict(lambda: collections.Counter())
    for case, exp, verdict, crules, svm, ok in rows:
        if case.startswith("negative/"):
            per_rule[exp][verdict] += 1
            if "terminate called" in svm:
                per_rule[exp]["spirv-val crashed"] += 1
    out = {}
    t = ["| rule | spirv-val 2026.4 checks it | negative cases | both reject | only coopmat | spec reference | summary |", "|---|---|---|---|---|---|---|"]
    for rid, spt, spec, summ in rules:
        c = per_rule.get(rid, collections.Counter())
        n = sum(v for k, v in c.items() if k != "spirv-val crashed")
        crash = f" ({c['spirv-val crashed']} crash)" if c["spirv-val crashed"] else ""
        t.append(f"| `{rid}` | {'yes' if spt == 'spirv-val too' else '**no** (gap)'} | {n} | {c['both']}{crash} | {c['coopmat-only']} | {spec} | {summ} |")
    out["rules"] = "\n".join(t)
    out["summary"] = "\n".join(f"- {s}" for s in summary)
    t = ["| case | expected rule | verdict | rules coopmat reports | spirv-val's first line |", "|---|---|---|---|---|"]
    for case, exp, verdict, crules, svm, ok in rows:
        t.append(f"| `{case}` | `{exp}` | {verdict} | {crules} | {svm} |")
    out["cases"] = "\n".join(t)
    path = os.path.join(ROOT, "VALIDATION.md")
    doc = open(path).read()
    for k, v in out.items():
        doc = re.sub(rf"(<!-- gen:{k} -->\n).*?(<!-- /gen:{k} -->)", lambda m: m.group(1) + v + "\n" + m.group(2), doc, flags=re.S)
    open(path, "w").write(doc)
    print("\n".join(summary))


if __name__ == "__main__":
    main()
