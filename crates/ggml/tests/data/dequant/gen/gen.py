import random, subprocess, sys
types = {  # name: (block_bytes, qk, [f16 offsets], e8m0 offset)
 'q4_0': (18, 32, [0], None), 'q4_1': (20, 32, [0, 2], None), 'q5_0': (22, 32, [0], None),
 'q5_1': (24, 32, [0, 2], None), 'q8_0': (34, 32, [0], None), 'q2_k': (84, 256, [80, 82], None),
 'q3_k': (110, 256, [108], None), 'q4_k': (144, 256, [0, 2], None), 'q5_k': (176, 256, [0, 2], None),
 'q6_k': (210, 256, [208], None), 'iq4_nl': (18, 32, [0], None), 'mxfp4': (17, 32, [], 0),
}
n = int(sys.argv[1]) if len(sys.argv) > 1 else 24
for name, (bb, qk, f16s, e8) in types.items():
    random.seed(name)
    data = bytearray()
    for b in range(n):
        blk = bytearray(random.getrandbits(8) for _ in range(bb))
        for o in f16s:
            h = 0x2000 + random.randrange(0x1800)     # ~2^-7 .. 2^-1 magnitudes
            if random.random() < 0.3: h |= 0x8000
            blk[o:o+2] = h.to_bytes(2, 'little')
        if e8 is not None:
            blk[e8] = random.randrange(110, 140)
        data += blk
    open(f'{name}.blocks', 'wb').write(data)
    r = subprocess.run(['/opt/coopmat-peers/bin/sid-run', './dq', f'/tmp/corpus/dequant_{name}.spv', f'{name}.blocks', str(n), str(qk), f'{name}.f16'])
    out = open(f'{name}.f16', 'rb').read()
    nan = sum(1 for i in range(0, len(out), 2) if out[i:i+2] == b'\x00\x7e')
    print(name, r.returncode, len(out), 'untouched', nan)
