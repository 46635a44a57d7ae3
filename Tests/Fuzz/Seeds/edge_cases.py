#!/usr/bin/env python3
"""Hand-made edge cases for the fuzz corpora (run by `scripts/dev/fuzz.sh seeds`).

FXT: each file is a trace with one deliberate oddity (docs/FORMAT.md, record layouts).
Chrome JSON: documents in both formats, every phase, and the syntax corners a streaming parser trips on.
"""
import os
import struct
import sys

MAGIC = 0x0016547846040010


def w(*words):
    return b"".join(struct.pack("<Q", x & 0xFFFFFFFFFFFFFFFF) for x in words)


def pad(b):
    return b + b"\0" * (-len(b) % 8)


def string_record(index, text):
    body = pad(text)
    return w(2 | ((1 + len(body) // 8) << 4) | (index << 16) | (len(text) << 32)) + body


def thread_record(index, pid, tid):
    return w(3 | (3 << 4) | (index << 16), pid, tid)


def init_record(ticks):
    return w(1 | (2 << 4), ticks)


def event(etype, thread_ref, cat_ref, name_ref, ts, args=b"", argc=0, trailing=None, inline=b""):
    body = w(ts) + inline + args + (w(trailing) if trailing is not None else b"")
    words = 1 + len(body) // 8
    return w(4 | (words << 4) | (etype << 16) | (argc << 20) | (thread_ref << 24) | (cat_ref << 32) | (name_ref << 48)) + body


def arg_u64(name_ref, value):
    return w(4 | (2 << 4) | (name_ref << 16), value)


def base():
    return (w(MAGIC) + init_record(1_000_000_000) + thread_record(1, 1, 2) +
            string_record(1, b"hitch.frame") + string_record(2, b"frameBegan") + string_record(3, b"frameID") +
            string_record(4, b"periodNs") + string_record(5, b"stage") + string_record(6, b"work"))


def fxt_cases():
    b = base()
    frame = event(0, 1, 1, 2, 1000, arg_u64(3, 1) + arg_u64(4, 16_666_667), argc=2)
    return {
        "magic-only.fxt": w(MAGIC),
        "wrong-magic.fxt": w(MAGIC ^ 1),
        "short.fxt": b"\x10\x00\x04",
        "zero-size-record.fxt": w(MAGIC, 4),
        "oversized-record.fxt": w(MAGIC) + w(4 | (0xFFF << 4)) + w(0) * 3,
        "huge-large-record.fxt": w(MAGIC) + w(15 | (0xFFFFFFFF << 4)) + w(0),
        "string-past-record.fxt": w(MAGIC) + w(2 | (2 << 4) | (0x7FFF << 16) | (0x7FFF << 32), 0),
        "undefined-refs.fxt": b + event(0, 200, 77, 78, 5),
        "inline-strings.fxt": b + event(2, 1, 0x8000 | 5, 0x8000 | 4, 10, inline=pad(b"stage") + pad(b"work")) + event(3, 1, 5, 6, 20),
        "inline-thread.fxt": b + event(4, 0, 5, 6, 10, inline=w(7, 8), trailing=30),
        "zero-ticks-init.fxt": w(MAGIC) + init_record(0) + thread_record(1, 1, 2) + string_record(5, b"stage") + string_record(6, b"work") + event(4, 1, 5, 6, 2**63, trailing=2**64 - 1),
        "one-tick-per-second.fxt": w(MAGIC) + init_record(1) + thread_record(1, 1, 2) + string_record(5, b"s") + string_record(6, b"w") + event(4, 1, 5, 6, 2**62, trailing=2**63),
        "arg-past-record.fxt": b + event(0, 1, 1, 2, 5, w(4 | (0xFFF << 4) | (3 << 16)), argc=15),
        "frame-then-garbage.fxt": b + frame + bytes(range(256)),
        "frames-odd-periods.fxt": b + event(0, 1, 1, 2, 1, arg_u64(3, 9) + arg_u64(4, 0), argc=2) + event(0, 1, 1, 2, 2, arg_u64(3, 10) + arg_u64(4, 2**63), argc=2),
        "end-before-begin.fxt": b + event(3, 1, 5, 6, 100) + event(2, 1, 5, 6, 50) + event(4, 1, 5, 6, 200, trailing=10),
        "unknown-types.fxt": b + w(10 | (1 << 4)) + w(4 | (2 << 4) | (14 << 16), 0) + w(15 | (2 << 4) | (3 << 36), 0),
        "blob-stack-overflow.fxt": b + string_record(7, b"hitch.stack") + w(5 | (3 << 4) | (7 << 16) | (16 << 32), 0xFFFFFFFF00000001, 0),
    }


def chrome_cases():
    return {
        "array.json": b'[{"name":"work","cat":"stage","ph":"X","ts":1.5,"dur":2,"pid":1,"tid":2,"args":{"n":1}},'
                      b'{"name":"b","ph":"B","ts":3,"pid":1,"tid":2},{"name":"b","ph":"E","ts":4,"pid":1,"tid":2},'
                      b'{"name":"c","ph":"C","ts":5,"pid":1,"tid":2,"args":{"v":3.5}},{"name":"i","ph":"i","s":"t","ts":6,"pid":1,"tid":2},'
                      b'{"name":"thread_name","ph":"M","pid":1,"tid":2,"args":{"name":"main"}}]',
        "unterminated-array.json": b'[{"name":"a","ph":"X","ts":0,"dur":1,"pid":1,"tid":1},\n{"name":"b","ph":"X","ts":1,"dur":1,"pid":1,"tid":1},',
        "object.json": b'{"traceEvents":[{"name":"s","ph":"P","ts":10,"pid":1,"tid":1,"sf":"2"},'
                       b'{"name":"f","ph":"s","id":"0x1","ts":1,"pid":1,"tid":1},{"name":"f","ph":"f","bp":"e","id":"0x1","ts":2,"pid":1,"tid":1}],'
                       b'"stackFrames":{"1":{"name":"main"},"2":{"name":"hot","parent":"1"},"3":{"name":"loop","parent":"3"}},'
                       b'"metadata":{"refreshRateHz":"120"},"displayTimeUnit":"ns"}',
        "hitch-typed.json": b'{"traceEvents":[{"name":"frameBegan","cat":"hitch.frame","ph":"i","ts":0,"pid":1,"tid":1,"args":{"frameID":1,"vsyncNs":0,"targetNs":8333333,"periodNs":8333333}},'
                            b'{"name":"frameCommitted","cat":"hitch.frame","ph":"i","ts":9000,"pid":1,"tid":1,"args":{"frameID":1}},'
                            b'{"name":"FeedRow","cat":"hitch.body","ph":"X","ts":10,"dur":600,"pid":1,"tid":1,"args":{"identity":"18446744073709551615"}},'
                            b'{"name":"qkv","cat":"hitch.op","ph":"X","ts":20,"dur":5,"pid":1,"tid":3,"args":{"bytesRead":1e30,"flops":-1,"layer":2147483648}},'
                            b'{"name":"hitch_metadata","ph":"M","pid":1,"tid":1,"args":{"key":"<script>","value":"\\u0000\\ud800"}}]}',
        "numbers.json": b'[{"name":"n","ph":"X","ts":1e308,"dur":-1e308,"pid":-1,"tid":1.5},{"name":"n","ph":"X","ts":-0,"dur":NaN},'
                        b'{"name":"n","ph":"X","ts":99999999999999999999999,"dur":0.0000001,"pid":"x","tid":[]}]',
        "deep.json": b"[" * 300 + b"]" * 300,
        "strings.json": b'[{"name":"\\ud83d\\ude00 \\u00e9 \\" \\\\ \\/ \\b\\f\\n\\r\\t","ph":"i","ts":0,"pid":1,"tid":1},{"name":"\\ud83d","ph":"i","ts":0,"pid":1,"tid":1}]',
        "empty-object.json": b"{}",
        "not-json.json": b"\xef\xbb\xbf[1,2",
        "wrong-types.json": b'{"traceEvents":{"a":1}}',
    }


def main():
    out = sys.argv[1]
    for sub, cases in (("reader", fxt_cases()), ("analyze", fxt_cases()), ("chrome", chrome_cases())):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
        for name, data in cases.items():
            with open(os.path.join(out, sub, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
