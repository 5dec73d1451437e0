#!/usr/bin/env python3
"""Runs coopmat val and spirv-val on tests/val/{negative,positive}/*.spvasm and prints a
markdown table: for each negative case whether each tool rejects it (and whether coopmat names
the expected rule); for each positive case whether both accept it.

Usage: scripts/val-compare.py [--coopmat PATH] [--peers DIR] [--out FILE]"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def headers(path):
    h = {}
    with open(path) as f:
        for line in f:
            if not line.startswith(";"):
                break
            if ":" in line:
                k, v = line[1:].split(":", 1)
                h[k.strip()] = v.strip()
    return h


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--coopmat", default=os.path.join(ROOT, "target", "debug", "coopmat"))
    ap.add_argument("--peers", default=os.environ.get("COOPMAT_PEERS_BIN", "/opt/coopmat-peers/bin"))
    ap.add_argument("--out")
    a = ap.parse_args()
    spirv_as = os.path.join(a.peers, "spirv-as")
    spirv_val = os.path.join(a.peers, "spirv-val")
    rows = []
    stats = {"both": 0, "coopmat-only": 0, "spirv-val-only": 0, "neither": 0, "rule-ok": 0, "neg": 0, "pos-ok": 0, "pos": 0}
    tmp = tempfile.mkdtemp()
    for kind in ("negative", "positive"):
        folder = os.path.join(ROOT, "tests", "val", kind)
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".spvasm"):
                continue
            path = os.path.join(folder, name)
            h = headers(path)
            spv = os.path.join(tmp, name + ".spv")
            r = subprocess.run([spirv_as, "--target-env", h.get("assemble-env", "vulkan1.3"), path, "-o", spv], capture_output=True, text=True)
            if r.returncode != 0:
                rows.append((kind, name[:-7], h.get("expect"), "asm-fail", r.stderr.strip().splitlines()[0] if r.stderr else "", "", ""))
                continue
            env = h.get("validate-env", "vulkan1.3")
            sv = subprocess.run([spirv_val, "--target-env", env, spv], capture_output=True, text=True)
            sv_reject = sv.returncode != 0
            sv_msg = (sv.stdout + sv.stderr).strip().splitlines()
            sv_msg = sv_msg[0] if sv_msg else ""
            cmd = [a.coopmat, "val", "--json", "--target-env", env, spv]
            if "profile" in h:
                cmd += ["--profile", h["profile"]]
            cv = subprocess.run(cmd, capture_output=True, text=True)
            try:
                doc = json.loads(cv.stdout)[0]
            except Exception:
                doc = {"valid": False, "diagnostics": [], "parse_error": cv.stdout + cv.stderr}
            cm_reject = not doc.get("valid", False)
            rules = sorted({d["rule"] for d in doc.get("diagnostics", []) if d["severity"] == "error"})
            if "parse_error" in doc:
                rules = ["Core-Structure"]
            if kind == "negative":
                stats["neg"] += 1
                exp = h.get("expect")
                if exp in rules:
                    stats["rule-ok"] += 1
                key = "both" if cm_reject and sv_reject else "coopmat-only" if cm_reject else "spirv-val-only" if sv_reject else "neither"
                stats[key] += 1
                rows.append((kind, name[:-7], exp, key, ",".join(rules), sv_msg.replace("|", "\\|"), "yes" if exp in rules else "NO"))
            else:
                stats["pos"] += 1
                ok = not cm_reject and not sv_reject
                stats["pos-ok"] += ok
                rows.append((kind, name[:-7], "valid", "both accept" if ok else f"coopmat {'rejects' if cm_reject else 'accepts'}, spirv-val {'rejects' if sv_reject else 'accepts'}", ",".join(rules), sv_msg.replace("|", "\\|"), "yes" if ok else "NO"))
    # GLSL cases: compiled with glslangValidator, first line `// expect: RULE` or `valid`.
    glslang = os.path.join(a.peers, "glslangValidator")
    gdir = os.path.join(ROOT, "tests", "val", "glsl")
    if os.path.exists(glslang) and os.path.isdir(gdir):
        for name in sorted(os.listdir(gdir)):
            if not name.endswith(".comp"):
                continue
            path = os.path.join(gdir, name)
            exp = open(path).readline().split(":", 1)[1].strip()
            spv = os.path.join(tmp, name + ".spv")
            r = subprocess.run([glslang, "--target-env", "vulkan1.3", "-V", path, "-o", spv], capture_output=True, text=True)
            if r.returncode != 0:
                rows.append(("glsl", name, exp, "glslang-fail", "", r.stdout.strip().splitlines()[-1:], ""))
                continue
            sv = subprocess.run([spirv_val, "--target-env", "vulkan1.3", spv], capture_output=True, text=True, errors="replace")
            cv = subprocess.run([a.coopmat, "val", "--json", spv], capture_output=True, text=True)
            doc = json.loads(cv.stdout)[0]
            rules = sorted({d["rule"] for d in doc.get("diagnostics", []) if d["severity"] == "error"})
            sv_msg = (sv.stdout + sv.stderr).strip().splitlines()
            sv_msg = (sv_msg[0] if sv_msg else "").replace("|", "\\|")
            cm_reject, sv_reject = not doc["valid"], sv.returncode != 0
            if exp == "valid":
                verdict = "both accept" if not cm_reject and not sv_reject else f"coopmat {'rejects' if cm_reject else 'accepts'}, spirv-val {'rejects' if sv_reject else 'accepts'}"
                ok = not cm_reject and not sv_reject
            else:
                verdict = "both" if cm_reject and sv_reject else "coopmat-only" if cm_reject else "spirv-val-only" if sv_reject else "neither"
                ok = exp in rules
            rows.append(("glsl", name, exp, verdict, ",".join(rules), sv_msg, "yes" if ok else "NO"))
    out = []
    out.append(f"negative cases: {stats['neg']}; coopmat names the expected rule: {stats['rule-ok']}; both reject: {stats['both']}; only coopmat rejects: {stats['coopmat-only']}; only spirv-val rejects: {stats['spirv-val-only']}; neither: {stats['neither']}")
    out.append(f"positive cases: {stats['pos']}; both accept: {stats['pos-ok']}")
    out.append("")
    out.append("| case | expected rule | verdict | coopmat rules | spirv-val (first line) | rule named |")
    out.append("|---|---|---|---|---|---|")
    for kind, name, exp, key, rules, svm, ok in rows:
        out.append(f"| {kind}/{name} | {exp} | {key} | {rules} | {svm[:140]} | {ok} |")
    text = "\n".join(out)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
