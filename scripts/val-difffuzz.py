#!/usr/bin/env python3
"""Differential fuzzing against spirv-val: mutates one word of the positive modules at a time,
runs spirv-val and coopmat val (vulkan1.3) and lists where they disagree.
Usage: scripts/val-difffuzz.py SEED COUNT   (peers in /opt/coopmat-peers/bin; COOPMAT=binary)"""
import os, random, struct, subprocess, json, sys, glob, tempfile
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TMP = tempfile.mkdtemp()
random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
pos = sorted(glob.glob(os.path.join(ROOT, 'tests/val/positive/*.spvasm')))
bins = []
for p in pos:
    out = TMP + '/' + os.path.basename(p) + '.spv'
    subprocess.run(['/opt/coopmat-peers/bin/spirv-as', '--target-env', 'vulkan1.3', p, '-o', out], check=True)
    bins.append(open(out, 'rb').read())
res = {'agree': 0, 'cm_only': [], 'sv_only': []}
N = int(sys.argv[2]) if len(sys.argv) > 2 else 200
for k in range(N):
    b = bytearray(random.choice(bins))
    nw = len(b) // 4
    pos_ = random.randrange(5, nw)
    w = struct.unpack_from('<I', b, pos_ * 4)[0]
    r = random.random()
    if r < 0.4: w = random.randrange(1, 120)
    elif r < 0.7: w = w ^ (1 << random.randrange(0, 8))
    else: w = (w + random.choice([1, -1])) & 0xffffffff
    struct.pack_into('<I', b, pos_ * 4, w)
    f = TMP + f'/m{k}.spv'
    open(f, 'wb').write(b)
    sv = subprocess.run(['/opt/coopmat-peers/bin/spirv-val', '--target-env', 'vulkan1.3', f], capture_output=True, text=True, errors='replace')
    cm = subprocess.run([os.environ.get('COOPMAT', os.path.join(ROOT, 'target', 'debug', 'coopmat')), 'val', '--json', f], capture_output=True, text=True, errors='replace')
    try:
        doc = json.loads(cm.stdout)[0]
    except Exception:
        doc = {'valid': False, 'diagnostics': []}
    cmr = not doc.get('valid')
    svr = sv.returncode != 0
    if cmr == svr:
        res['agree'] += 1
    elif cmr:
        res['cm_only'].append((f, [d['rule'] + ': ' + d['message'] for d in doc['diagnostics'] if d['severity'] == 'error'][:2]))
    else:
        os.rename(f, TMP + f'/svonly{k}.spv')
        res['sv_only'].append((TMP + f'/svonly{k}.spv', (sv.stdout + sv.stderr).strip().splitlines()[0][:200]))
print('agree', res['agree'], 'coopmat-only', len(res['cm_only']), 'spirv-val-only', len(res['sv_only']))
print('--- coopmat only (possible false positives)')
for f, m in res['cm_only']: print(f, m)
print('--- spirv-val only')
for f, m in res['sv_only']: print(f, m)
