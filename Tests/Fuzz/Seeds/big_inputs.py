#!/usr/bin/env python3
"""1 MB inputs for the fuzz targets' time bound (`scripts/dev/fuzz.sh big`): each must run in under a
second (-timeout=1). Written to the directory given, one subdirectory per target."""
import os
import random
import struct
import sys

MAGIC = struct.pack('<Q', 0x0016547846040010)
MB = 1 << 20


def main():
    out, root = sys.argv[1], sys.argv[2]
    random.seed(8)
    for sub in ('reader', 'analyze', 'chrome', 'budget'):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    seed = open(os.path.join(root, 'Tests/Fuzz/corpus/reader/every-kind.fxt'), 'rb').read()
    body = seed[8:]
    repeated = seed[:8] + body * ((MB - 8) // len(body))
    flipped = bytearray(repeated)
    for _ in range(2000):
        i = random.randrange(8, len(flipped))
        flipped[i] ^= 1 << random.randrange(8)
    strings = b''
    i = 1
    while len(strings) < MB - 64:
        text = b'name%05d' % i
        strings += struct.pack('<Q', 2 | (2 << 4) | ((i & 0x7fff) << 16) | (len(text) << 32)) + text
        i += 1
    fxt = {
        'repeated.fxt': repeated,
        'bitflips.fxt': bytes(flipped),
        'noise.fxt': MAGIC + bytes(random.getrandbits(8) for _ in range(MB - 8)),
        'strings.fxt': MAGIC + strings,
    }
    event = b'{"name":"w","cat":"stage","ph":"X","ts":1,"dur":2,"pid":1,"tid":1},'
    begin = b'{"name":"b","ph":"B","ts":1,"pid":1,"tid":1},'
    budget = b'{"metric":"hitches.120.hitchCount","max":1},'
    files = {
        'chrome/events.json': b'[' + event * (MB // len(event)) + b']',
        'chrome/begins.json': b'[' + begin * (MB // len(begin)) + b']',
        'chrome/deep.json': b'[' * (MB // 2) + b']' * (MB // 2),
        'budget/many.json': b'{"budgets":[' + budget * (MB // len(budget)) + b'{"metric":"stages[0].totalMs","max":1}]}',
        'budget/deep.json': b'{"budgets":' + b'[' * (MB // 2) + b']' * (MB // 2) + b'}',
    }
    for name, data in fxt.items():
        files['reader/' + name] = data
        files['analyze/' + name] = data
    for name, data in files.items():
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)


if __name__ == '__main__':
    main()
