#!/usr/bin/env python3
"""Writes hostile-names.json: a small Chrome trace whose every name tries to escape its context
(markup, script, attribute breaks, javascript: URLs, RTL overrides, very long names, requests to a
local canary server on 127.0.0.1:8765). scripts/check-report-in-browser.sh imports it, renders the
report and checks in headless Chromium that none of it ran. Deterministic: same output every run."""
import json, os

CANARY = "http://127.0.0.1:8765/"
HOSTILE = [
    "<script>document.title='PWNED'</script>",
    "\"><img src=\"" + CANARY + "img\" onerror=\"document.title='PWNED'\">",
    "</style><script>document.title='PWNED'</script>",
    "javascript:document.title='PWNED'",
    "\u202egnp.exe\u202c rtl override",
    "</svg><svg onload=\"document.title='PWNED'\">",
    "' onmouseover='document.title=\"PWNED\"' x='",
    "<iframe src=\"" + CANARY + "iframe\"></iframe>",
    "</title><script>fetch('" + CANARY + "fetch')</script>",
    "<link rel=stylesheet href=\"" + CANARY + "css\">",
    "<div id=\"pwned-element\">injected</div>",
    "<!-- unclosed comment",
    "]]><![CDATA[",
    "LongName" * 40,
    "&lt;pre-escaped&gt; &amp;",
    "<style>body{display:none}</style>",
]

def name(i, base):
    return HOSTILE[i % len(HOSTILE)] + " " + base

events = []
def ev(**kw):
    kw.setdefault("pid", 1)
    events.append(kw)

ev(ph="M", tid=1, name="thread_name", args={"name": "main"})
ev(ph="M", tid=2, name="thread_name", args={"name": name(1, "render")})
ev(ph="M", tid=3, name="thread_name", args={"name": name(2, "inference")})
for i, (k, v) in enumerate([("workload", name(0, "feed")), ("host", name(3, "host")), ("peakBandwidthGBps", "10"),
                            ("peakGFLOPS", "80"), (name(4, "key"), name(5, "value")), ("weightsBytes", "500000"),
                            ("kvCacheBytes", "10000"), ("promptTokens", "3")]):
    ev(ph="M", tid=1, ts=1000.0, name="hitch_metadata", args={"key": k, "value": v})
ev(ph="M", tid=1, ts=1000.0, name="hitch_stack", args={"stack": 1, "addresses": ["0x1000", "0x1010", "0x1020"]})
for i, addr in enumerate([0x1000, 0x1010, 0x1020]):
    ev(ph="M", tid=1, ts=1000.0, name="hitch_symbol",
       args={"address": hex(addr), "size": 16, "function": name(6 + i, "func%d" % i), "image": name(9, "image"), "offset": 0})

period = 8333.333
ev(ph="b", tid=1, ts=1000.0, cat="hitch.interaction", name="typing", id="i1")
for f in range(40):
    vsync = 1000.0 + f * period
    late = f % 7 == 4
    work = 21000.0 if late else 2500.0
    fid = f + 1
    ev(ph="b", tid=1, ts=round(vsync, 3), cat="hitch.frame", name="frame", id=hex(fid),
       args={"frameID": fid, "vsyncNs": int(vsync * 1000), "targetNs": int((vsync + period) * 1000), "periodNs": int(period * 1000)})
    stage = name(f % 5, "stage%d" % (f % 3))
    ev(ph="B", tid=1, ts=round(vsync + 10, 3), cat="stage", name=stage)
    ev(ph="i", tid=1, ts=round(vsync + 20, 3), cat="hitch.invalidation", name="inv", s="t",
       args={"source": name(f % 4 + 7, "Model.prop"), "target": name(f % 3 + 2, "RowView"), "targetIdentity": f % 4, "stack": 1})
    ev(ph="X", tid=1, ts=round(vsync + 30, 3), dur=round(work / 3, 3), cat="hitch.body", name=name(f % 3 + 2, "RowView"), args={"identity": f % 4})
    ev(ph="X", tid=1, ts=round(vsync + 40 + work / 3, 3), dur=200.0, cat="hitch.layout", name="layout", args={"viewCount": 12})
    ev(ph="P", tid=1, ts=round(vsync + work / 2, 3), cat="hitch.sample", name="sample", args={"stack": 1})
    ev(ph="E", tid=1, ts=round(vsync + work, 3), cat="stage", name=stage)
    ev(ph="n", tid=1, ts=round(vsync + work + 50, 3), cat="hitch.frame", name="commit", id=hex(fid), args={"frameID": fid})
    render_end = vsync + work + 50 + 1500
    ev(ph="n", tid=2, ts=round(render_end, 3), cat="hitch.frame", name="render end", id=hex(fid), args={"frameID": fid})
    present = 1000.0 + (int((render_end - 1000.0) / period) + 1) * period
    ev(ph="e", tid=2, ts=round(present, 3), cat="hitch.frame", name="frame", id=hex(fid), args={"frameID": fid})
    ev(ph="C", tid=3, ts=round(vsync + 100, 3), name="resident-bytes", args={"value": 1000000 + f * 100})
ev(ph="e", tid=1, ts=round(1000.0 + 40 * period, 3), cat="hitch.interaction", name="typing", id="i1")
t = 5000.0
for token in range(8):
    for i, op in enumerate(["qkv", "attention", "down"]):
        ev(ph="X", tid=3, ts=round(t, 3), dur=300.0 + i * 100, cat="hitch.op", name=name(i + 10, op),
           args={"layer": i, "computeUnit": name(12, "cpu"), "tokenIndex": token, "bytesRead": 150000, "bytesWritten": 512, "flops": 400000 * (i + 1)})
        t += 300.0 + i * 100
    ev(ph="i", tid=3, ts=round(t, 3), cat="hitch.token", name="produced", s="t", args={"index": token})
    ev(ph="i", tid=1, ts=round(t + 900, 3), cat="hitch.token", name="shown", s="t", args={"index": token})

events.sort(key=lambda e: e.get("ts", 0.0))
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hostile-names.json")
with open(out, "w", encoding="utf-8") as f:
    json.dump({"traceEvents": events}, f, ensure_ascii=False, separators=(",", ":"))
    f.write("\n")
print(out, len(events), "events")
