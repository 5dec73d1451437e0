#!/usr/bin/env python3
"""Runs the Amber scripts of the Vulkan CTS and of google/amber on coopmat's engine and counts the
outcomes. The repositories are not part of this one: give checkouts (or any copies of the folders).

  scripts/amber-upstream.py --cts VK-GL-CTS --amber AMBER [--coopmat target/release/coopmat] [--robust]

It runs `coopmat amber` over VK-GL-CTS/external/vulkancts/data/vulkan/amber (*.amber) and
AMBER/tests/cases (*.amber, *.vkscript) and prints, per suite: passed, failed, expected failures
(scripts named *.expect_fail.*, which Amber's own test runner expects to fail), skips by class, and
every failure and every skip whose reason is none of: images/samplers/texel buffers, graphics
(pipelines, shaders, draws, framebuffers, vertex input, probes), ray tracing, a device feature or
extension of those, or a named requirement no device can meet (FULLY_POPULATED with a local size
that is not a multiple of the subgroup size). Exit status 1 when anything failed unexpectedly.

Peers: glslangValidator and spirv-opt (install-peers.sh) for GLSL and SHADER_OPTIMIZATION; clspv
for OPENCL-C shaders (scripts/clspv over `pip install pyclspv==0.0.1` is one)."""
import argparse
import collections
import os
import re
import subprocess
import sys

GRAPHICS = re.compile(
    r"graphics|fragment|vertex|tessellation|geometry|PASSTHROUGH|DRAW|framebuffer|image probe|"
    r"FRAMEBUFFER|EQ_HISTOGRAM|sampleRateShading|fillModeNonSolid|depthClamp|depth_range|"
    r"primitive_topology|indexTypeUint8|DepthClampZeroOne|shader_terminate_invocation|"
    r"pipeline_library|shaderStorageImageMultisample|multiDraw"
)
IMAGES = re.compile(r"IMAGE|SAMPLER|image|texel_buffer|FORMAT [A-Z0-9_]+ \(image|PACK|mixed-width")
RAY_TRACING = re.compile(r"ray tracing|raytracing|RayTracing|AccelerationStructure|ray_tracing|acceleration_structure")
DEVICE_LIMIT = re.compile(r"FULLY_POPULATED")
TEMPLATE = re.compile(r"template with unfilled placeholders")


def classify(reason):
    parts = [p.strip() for p in reason.split(";")]
    classes = set()
    for p in parts:
        if RAY_TRACING.search(p):
            classes.add("ray tracing")
        elif GRAPHICS.search(p):
            classes.add("graphics")
        elif IMAGES.search(p):
            classes.add("images/samplers")
        elif DEVICE_LIMIT.search(p):
            classes.add("no device can run it (VUID)")
        elif TEMPLATE.search(p):
            classes.add("a template, not a test")
        elif p.startswith("needs DEVICE_"):
            classes.add("other: " + p)
        else:
            classes.add("other: " + p)
    # A script is counted under its most telling class.
    for c in ["ray tracing", "graphics", "images/samplers", "no device can run it (VUID)", "a template, not a test"]:
        if c in classes:
            return c
    return sorted(classes)[0]


def run(coopmat, folder, robust):
    cmd = [coopmat, "amber", folder] + (["--robust"] if robust else [])
    out = subprocess.run(cmd, capture_output=True, text=True)
    lines = [l for l in out.stdout.splitlines() if l.startswith(("PASS ", "FAIL ", "SKIP "))]
    return lines, out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cts", help="a VK-GL-CTS checkout")
    ap.add_argument("--amber", help="a google/amber checkout")
    ap.add_argument("--coopmat", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "coopmat"))
    ap.add_argument("--robust", action="store_true", help="run with the engine's robust mode on")
    a = ap.parse_args()
    suites = []
    if a.cts:
        suites.append(("Vulkan CTS", os.path.join(a.cts, "external/vulkancts/data/vulkan/amber")))
    if a.amber:
        suites.append(("google/amber", os.path.join(a.amber, "tests/cases")))
    if not suites:
        ap.error("give --cts and/or --amber")
    unexpected = 0
    for name, folder in suites:
        lines, summary = run(a.coopmat, folder, a.robust)
        counts = collections.Counter()
        skips = collections.Counter()
        notes = []
        for l in lines:
            kind, rest = l.split(" ", 1)
            path, _, reason = rest.partition(": ")
            expect_fail = ".expect_fail." in os.path.basename(path)
            if kind == "PASS":
                counts["passed" if not expect_fail else "expected to fail but passed"] += 1
                if expect_fail:
                    notes.append("PASSED (expected to fail): " + path)
            elif kind == "FAIL":
                if expect_fail:
                    counts["failed as expected (*.expect_fail.*)"] += 1
                else:
                    counts["failed"] += 1
                    notes.append("FAIL " + path + ": " + reason)
            else:
                c = classify(reason)
                skips[c] += 1
                if c.startswith("other"):
                    notes.append("SKIP " + path + ": " + reason)
        print(f"## {name}: {folder}")
        print(f"scripts: {len(lines)}; coopmat's summary: {summary}")
        for k in ["passed", "failed", "failed as expected (*.expect_fail.*)", "expected to fail but passed"]:
            print(f"  {k}: {counts[k]}")
        print(f"  skipped: {sum(skips.values())}")
        for k, v in sorted(skips.items(), key=lambda kv: -kv[1]):
            print(f"    {k}: {v}")
        for n in notes:
            print("  " + n)
        unexpected += counts["failed"] + counts["expected to fail but passed"]
        unexpected += sum(v for k, v in skips.items() if k.startswith("other"))
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
