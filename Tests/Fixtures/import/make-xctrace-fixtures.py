#!/usr/bin/env python3
"""Writes the xctrace fixtures in Tests/Fixtures/import/: what `xctrace export --xpath
'/trace-toc/run[@number="1"]/data/table[@schema="…"]'` prints, following the exports' shape (one
<node> per table, <schema> columns by <mnemonic>, values defined once with id= and repeated with
ref=, <sentinel/> for empty cells), and each one's ground truth as JSON.

    python3 Tests/Fixtures/import/make-xctrace-fixtures.py                      # the committed fixtures
    python3 Tests/Fixtures/import/make-xctrace-fixtures.py --big 1024 /tmp/big.xml   # a 1 GB time-profile export

A ProMotion display: presents every 8.333 ms, then at 60 Hz (the vsync intervals say when); Apple's
hitches of one to three periods on some presents, matched by swap id or, without one, by time.

xctrace-detail.xml adds, for the same presents: hitches-updates (the app's commits; one of another
process's, to be ignored), hitches-renders and hitches-gpu by swap id, planting a commit hitch on
every hitch of two or more periods and a render hitch on the others (one of them late on the GPU,
its render in time), and hitches-framewait intervals; swiftui-updates (view body updates of FeedRow
and FeedList, and representable updates that are not bodies), swiftui-causes and
swiftui-full-causes (property -> view edges; the full table repeats every edge of the other and adds
attribute-graph edges, its nodes carrying their event ids and times as xctrace 26's typed arrays do)
and swiftui-update-groups. The hitches-gpu and hitches-framewait columns are the ones exporters of
those tables read (start, duration, display, swap-id, surface-id, frame-color, ...): no export of
them was at hand. xctrace-display-info.xml is a 30 fps app on a 60 Hz display
without vsync intervals: device-display-info's rate, not the presents' spacing, is the period.
"""
import json
import os
import sys
from xml.sax.saxutils import escape as xml_escape


def escape(text):
    """Text and attribute values as xctrace writes them: & < > " escaped."""
    return xml_escape(text, {'"': "&quot;"})

APP_PID = 7
PERIODS = [(0, 8_333_333), (300, 16_666_667)]   # from present index 300 on, 60 Hz


class Ids:
    def __init__(self):
        self.n = 0
        self.defined = {}

    def value(self, tag, text, fmt=None, key=None, inner=""):
        """A value element: defined with id= the first time `key` is seen, a ref= after."""
        if key is not None and key in self.defined:
            return f'<{tag} ref="{self.defined[key]}"/>'
        self.n += 1
        if key is not None:
            self.defined[key] = self.n
        f = f' fmt="{escape(fmt)}"' if fmt is not None else ""
        return f'<{tag} id="{self.n}"{f}>{inner}{escape(text)}</{tag}>'


    def element(self, tag, attributes, key, inner=None):
        """An element with attributes (and children), defined once by `key`, a ref= after."""
        if key in self.defined:
            return f'<{tag} ref="{self.defined[key]}"/>'
        self.n += 1
        self.defined[key] = self.n
        head = f'<{tag} id="{self.n}" {attributes}'
        return head + ("/>" if inner is None else f">{inner}</{tag}>")


def schema(name, columns):
    cols = "".join(f"<col><mnemonic>{c}</mnemonic><name>{c.title()}</name></col>" for c in columns)
    return f'<schema name="{name}">{cols}</schema>'


def process(ids):
    return ids.value("process", "", fmt=f"FeedApp ({APP_PID})", key="process",
                     inner=ids.value("pid", str(APP_PID), fmt=str(APP_PID), key="pid"))


def timeline():
    presents, vsyncs, hitches = [], [], []
    t = 20_000_000_000
    planted = {40: 1, 80: 2, 120: 3, 200: 1, 330: 1, 400: 2}
    for i in range(480):
        period = [p for start, p in PERIODS if i >= start][-1]
        if i in planted:
            duration = planted[i] * period
            t += duration
            hitches.append(dict(index=i, start=t - duration, duration=duration, swap=i if i % 2 == 0 else None,
                                narrative="Potential Issue: expensive commit" if planted[i] > 1 else "Potential Issue: long render"))
        presents.append(dict(at=t, swap=i, period=period))
        t += period
    for start_index, period in PERIODS:
        vsyncs.append(dict(at=presents[start_index]["at"] - (200_000_000 if start_index == 0 else 1_000_000), period=period))
    return presents, vsyncs, hitches


def write(out):
    presents, vsyncs, hitches = timeline()
    ids = Ids()
    rows = []
    for h in hitches:
        swap = ids.value("uint64", str(h["swap"]), fmt=str(h["swap"])) if h["swap"] is not None else "<sentinel/>"
        rows.append("<row>" + ids.value("start-time", str(h["start"]), fmt="t") + ids.value("duration", str(h["duration"]), fmt="d", key=("d", h["duration"]))
                    + process(ids) + ids.value("boolean", "0", fmt="No", key="no") + swap
                    + ids.value("string", "Hitch", key="label") + ids.value("display-name", "Display 1", key="display")
                    + ids.value("narrative", h["narrative"], key=h["narrative"]) + "</row>")
    hitch_xml = ('<?xml version="1.0"?>\n<trace-query-result>\n<node xpath=\'//trace-toc[1]/run[1]/data[1]/table[66]\'>'
                 + schema("hitches", ["start", "duration", "process", "is-system", "swap-id", "label", "display", "narrative-description"])
                 + "\n" + "\n".join(rows) + "\n</node>\n</trace-query-result>\n")
    ids = Ids()
    swaps = [("<row>" + ids.value("start-time", str(p["at"]), fmt="t") + process(ids)
              + ids.value("uint64", str(p["swap"]), fmt=str(p["swap"])) + ids.value("display-name", "Display 1", key="display") + "</row>")
             for p in presents]
    vs = [("<row>" + ids.value("start-time", str(v["at"]), fmt="t") + ids.value("duration", str(v["period"]), fmt="d", key=("d", v["period"]))
           + ids.value("display-name", "Display 1", key="display") + "</row>") for v in vsyncs]
    display_xml = ('<?xml version="1.0"?>\n<trace-query-result>\n<node xpath=\'//trace-toc[1]/run[1]/data[1]/table[12]\'>'
                   + schema("display-surface-swap", ["start", "process", "swap-id", "display"]) + "\n" + "\n".join(swaps)
                   + "\n</node>\n<node xpath='//trace-toc[1]/run[1]/data[1]/table[13]'>"
                   + schema("display-vsyncs-interval", ["start", "duration", "display"]) + "\n" + "\n".join(vs)
                   + "\n</node>\n</trace-query-result>\n")
    # Samples on the main thread inside the hitched frames' windows: <backtrace> and <tagged-backtrace>.
    ids = Ids()
    rows = []
    for n, h in enumerate(hitches):
        for k in range(4):
            at = h["start"] - 2 * [p for s, p in PERIODS if h["index"] >= s][-1] + k * 2_000_000
            thread = ids.value("thread", "", fmt=f"Main Thread 0x1 (FeedApp, pid: {APP_PID})", key="main",
                               inner=ids.value("tid", "1", fmt="0x1", key="tid") + process(ids))
            binary = lambda: ids.element("binary", 'name="FeedApp" load-addr="0x100000000"', "binary")
            leaf = ids.element("frame", 'name="FeedRow.body.getter" addr="0x100004a10"', "leaf", inner=binary())
            root = ids.element("frame", 'name="main" addr="0x100001000"', "root", inner=binary())
            stack = f"<backtrace>{leaf}{root}</backtrace>"
            if k % 2:
                stack = f"<tagged-backtrace>{stack}</tagged-backtrace>"
            rows.append("<row>" + ids.value("sample-time", str(at), fmt="t") + thread + process(ids)
                        + ids.value("weight", "1000000", fmt="1.00 ms", key="w") + stack + "</row>")
    profile_xml = ('<?xml version="1.0"?>\n<trace-query-result>\n<node xpath=\'//trace-toc[1]/run[1]/data[1]/table[3]\'>'
                   + schema("time-profile", ["time", "thread", "process", "weight", "stack"]) + "\n" + "\n".join(rows)
                   + "\n</node>\n</trace-query-result>\n")
    for name, text in (("xctrace-hitches.xml", hitch_xml), ("xctrace-display.xml", display_xml), ("xctrace-time-profile.xml", profile_xml)):
        with open(os.path.join(out, name), "w") as f:
            f.write(text)
    extra = dict(detail=detail(out, presents, hitches), displayInfo=display_info(out))
    first_vsync = presents[0]["at"] - 2 * presents[0]["period"]
    total = sum(h["duration"] for h in hitches)
    animation = presents[-1]["at"] - first_vsync
    with open(os.path.join(out, "xctrace.truth.json"), "w") as f:
        json.dump(dict(appleHitchCount=len(hitches), totalHitchNs=total, animationNs=animation,
                       hitchTimeRatioMsPerS=total / 1e6 / (animation / 1e9), frames=len(presents),
                       periodsNs=[p for _, p in PERIODS], **extra), f, indent=1)
        f.write("\n")


def detail(out, presents, hitches):
    """xctrace-detail.xml and its truth (see the docstring)."""
    ids = Ids()
    lateness = {h["index"]: h["duration"] for h in hitches}
    updates, renders, gpus, waits, bodies, causes, full_causes, groups = [], [], [], [], [], [], [], []
    kinds, body_counts, edge_counts, group_count = [], {}, {}, 0
    gpu_late, gpu_late_ns = [], 0
    event_ids = iter(range(5000, 10**9))

    def node(name, color, symbol, event_id, full=False, at=None, duration=None):
        """A cause graph node as xctrace writes it: a typed-array (label, color, symbol, two empty
        cells; the full table adds the event id, its time and duration)."""
        cells = (ids.value("string", name, fmt=name, key=("s", name)) + ids.value("string", color, fmt=color, key=("s", color))
                 + ids.value("string", symbol, fmt=symbol, key=("s", symbol)) + "<sentinel/><sentinel/>")
        fmt = f"{name}, {color}, {symbol}, n/a, n/a"
        if full:
            cells += ids.value("uint32", str(event_id), fmt=str(event_id))
            cells += (ids.value("event-time", str(at), fmt="t") if at is not None else "<sentinel/>") + "<sentinel/>"
            cells += ids.value("duration", str(duration), fmt="d") if duration is not None else "<sentinel/>"
            fmt += f", {event_id}, n/a, n/a, n/a"
        return ids.value("typed-array", "", fmt=fmt, inner=cells)

    def edge(at, source, destination, full_only=False):
        """One cause -> effect edge: in swiftui-full-causes, and in swiftui-causes unless `full_only`."""
        source_id, destination_id = next(event_ids), next(event_ids)
        head = lambda full: (ids.value("event-time", str(at), fmt="t") + ids.value("uint32", str(source_id), fmt=str(source_id))
                             + node(source[0], "gray", source[1], source_id, full, at=at - ms // 10)
                             + ids.value("uint32", str(destination_id), fmt=str(destination_id))
                             + node(destination, "blue", "square", destination_id, full, duration=ms // 2)
                             + ids.value("string", "Update", fmt="Update", key=("s", "Update")) + "<sentinel/><sentinel/><sentinel/>" + process(ids))
        if not full_only:
            causes.append("<row>" + head(False) + "</row>")
        full_causes.append("<row>" + head(True) + "</row>")
        edge_counts[(source[0], destination)] = edge_counts.get((source[0], destination), 0) + 1
    thread = lambda: ids.value("thread", "", fmt=f"Main Thread 0x1 (FeedApp, pid: {APP_PID})", key="main",
                               inner=ids.value("tid", "1", fmt="0x1", key="tid") + process(ids))
    ms = 1_000_000
    near = {i + d for i in lateness for d in range(-2, 3)}   # commits and renders around the hitches only (small)
    for i, pr in enumerate(presents):
        if i not in near and i >= 100:
            continue
        p = pr["period"]
        late = lateness.get(i, 0)
        expected = pr["at"] - late
        vsync, target = expected - 2 * p, expected - p
        k = late // p if late else 0
        update = (vsync + p // 10, vsync + 4 * p // 10)
        render = (target + p // 20, target + 3 * p // 10)
        gpu = (render[1] - p // 10, render[1] + p // 20)
        if k >= 2:
            update = (vsync + p // 10, target + k * p - p // 2)
            kinds.append(dict(swap=i, kind="commit"))
        elif k == 1 and i == 200:
            # Late on the GPU, the render server's own work in time: the render ends with the GPU.
            gpu = (render[1] - p // 10, target + p + 3 * p // 10)
            kinds.append(dict(swap=i, kind="render"))
            gpu_late.append(dict(swap=i, renderNs=gpu[1] - target))
            gpu_late_ns += gpu[1] - gpu[0]
        elif k == 1:
            render = (target + p // 20, target + p + 3 * p // 10)
            gpu = (render[1] - p // 10, render[1] + p // 20)
            kinds.append(dict(swap=i, kind="render"))
            # Another process's commit of the same swap id, ending late: the app's own is the one taken.
            updates.append("<row>" + ids.value("start-time", str(vsync), fmt="t") + ids.value("duration", str(target + p - vsync), fmt="d")
                           + ids.value("process", "", fmt="Other (99)", key="other", inner=ids.value("pid", "99", fmt="99", key="pid99"))
                           + ids.value("uint64", str(i), fmt=str(i)) + "</row>")
        updates.append("<row>" + ids.value("start-time", str(update[0]), fmt="t") + ids.value("duration", str(update[1] - update[0]), fmt="d")
                       + process(ids) + ids.value("uint64", str(i), fmt=str(i)) + "</row>")
        renders.append("<row>" + ids.value("start-time", str(render[0]), fmt="t") + ids.value("duration", str(render[1] - render[0]), fmt="d")
                       + ids.value("display-name", "Display 1", key="display") + ids.value("uint64", str(i), fmt=str(i))
                       + ids.value("uint64", "4242", fmt="4242", key="surface") + "</row>")
        # The GPU's work and the frame wait: display-level rows, the swap id in the text and in hex in fmt.
        gpus.append("<row>" + ids.value("start-time", str(gpu[0]), fmt="t") + ids.value("duration", str(gpu[1] - gpu[0]), fmt="d")
                    + ids.value("display-name", "Display 1", key="display") + ids.value("uint32", str(i), fmt=hex(i))
                    + ids.value("uint32", "4242", fmt="4242", key="surface") + ids.value("event-concept", "Green", key="green")
                    + ids.value("uint32", "0", fmt="0", key="zero") + ids.value("string", hex(i), fmt=hex(i)) + "</row>")
        waits.append("<row>" + ids.value("start-time", str(gpu[1]), fmt="t") + ids.value("duration", str(p // 10), fmt="d")
                     + ids.value("display-name", "Display 1", key="display") + ids.value("uint32", str(i), fmt=hex(i))
                     + ids.value("uint32", "4242", fmt="4242", key="surface") + ids.value("event-concept", "Green", key="green")
                     + ids.value("uint32", "0", fmt="0", key="zero") + ids.value("string", hex(i), fmt=hex(i)) + "</row>")
        if i % 2 == 0 and i < 100:
            for view, identity, source in (("FeedRow", f"row-{i % 10}", "@Observable FeedModel.rows"),) + (
                    (("FeedList", "list", "@State FeedList.query"),) if i % 10 == 0 else ()):
                start = update[0] + ms // 5
                edge(start - ms // 20, (source, "pencil.and.list.clipboard"), view)
                bodies.append("<row>" + ids.value("start-time", str(start), fmt="t") + ids.value("duration", str(ms // 2), fmt="d", key="half")
                              + ids.value("string", identity, key=("id", identity)) + ids.value("string", "View Body Update", key="body")
                              + ids.value("string", view, key=("view", view)) + thread() + process(ids) + "</row>")
                body_counts[view] = body_counts.get(view, 0) + 1
            bodies.append("<row>" + ids.value("start-time", str(update[0]), fmt="t") + ids.value("duration", str(ms // 10), fmt="d", key="tenth")
                          + ids.value("string", "map", key=("id", "map")) + ids.value("string", "Representable Update", key="repr")
                          + ids.value("string", "MapView", key=("view", "MapView")) + thread() + process(ids) + "</row>")
        if i % 10 == 0 and i < 100:
            # Attribute-graph edges only the full cause table lists.
            edge(update[0] + ms // 10, ("<graph>", "point.3.filled.connected.trianglepath.dotted"), "FeedRow", full_only=True)
        if i % 20 == 0 and i < 100:
            groups.append("<row>" + ids.value("start-time", str(update[0]), fmt="t") + ids.value("duration", str(2 * ms), fmt="d", key="two")
                          + ids.value("string", "Transaction", key="transaction") + thread() + "</row>")
            group_count += 1
    cause_columns = ["timestamp", "source-node-event-id", "source-node", "destination-node-event-id", "destination-node", "label",
                     "value-type", "changed-properties", "layout-info", "process"]
    xml = ('<?xml version="1.0"?>\n<trace-query-result>\n'
           + "<node xpath='//trace-toc[1]/run[1]/data[1]/table[70]'>" + schema("hitches-updates", ["start", "duration", "process", "swap-id"])
           + "\n" + "\n".join(updates) + "\n</node>\n"
           + "<node xpath='//trace-toc[1]/run[1]/data[1]/table[71]'>" + schema("hitches-renders", ["start", "duration", "display", "swap-id", "surface-id"])
           + "\n" + "\n".join(renders) + "\n</node>\n"
           + "<node xpath='//trace-toc[1]/run[1]/data[1]/table[72]'>"
           + schema("hitches-gpu", ["start", "duration", "display", "swap-id", "surface-id", "frame-color", "containment-level", "label"])
           + "\n" + "\n".join(gpus) + "\n</node>\n"
           + "<node xpath='//trace-toc[1]/run[1]/data[1]/table[73]'>"
           + schema("hitches-framewait", ["start", "duration", "display", "swap-id", "surface-id", "frame-color", "layout-qualifier", "label"])
           + "\n" + "\n".join(waits) + "\n</node>\n"
           + "<node xpath='//trace-toc[1]/run[1]/data[1]/table[80]'>"
           + schema("swiftui-updates", ["start", "duration", "id", "update-type", "view-name", "thread", "process"])
           + "\n" + "\n".join(bodies) + "\n</node>\n"
           + "<node xpath='//trace-toc[1]/run[1]/data[1]/table[81]'>" + schema("swiftui-causes", cause_columns)
           + "\n" + "\n".join(causes) + "\n</node>\n"
           + "<node xpath='//trace-toc[1]/run[1]/data[1]/table[83]'>" + schema("swiftui-full-causes", cause_columns)
           + "\n" + "\n".join(full_causes) + "\n</node>\n"
           + "<node xpath='//trace-toc[1]/run[1]/data[1]/table[82]'>" + schema("swiftui-update-groups", ["start", "duration", "label", "thread"])
           + "\n" + "\n".join(groups) + "\n</node>\n</trace-query-result>\n")
    with open(os.path.join(out, "xctrace-detail.xml"), "w") as f:
        f.write(xml)
    return dict(hitchKinds=kinds, bodies=body_counts, edges=[dict(source=s, target=t, count=c) for (s, t), c in sorted(edge_counts.items())],
                groups=group_count, renders=len(renders), gpus=len(gpus), frameWaits=len(waits),
                gpuLate=gpu_late, gpuLateNs=gpu_late_ns)


def display_info(out):
    """xctrace-display-info.xml: presents of a 30 fps app on display 2 (60 Hz), display 1 (the main
    one, 120 Hz) also listed, no vsync intervals."""
    ids = Ids()
    t, rows = 30_000_000_000, []
    for i in range(120):
        rows.append("<row>" + ids.value("start-time", str(t), fmt="t") + process(ids)
                    + ids.value("uint64", str(i), fmt=str(i)) + ids.value("display-name", "Display 2", key="display") + "</row>")
        t += 2 * 16_666_667
    info = []
    for display, rate, main in ((1, 120, "Yes"), (2, 60, "No")):
        info.append("<row>" + ids.value("event-time", "0", fmt="t") + ids.value("uint32", str(display), fmt=str(display))
                    + ids.value("string", "Built-in Display" if main == "Yes" else "External Display")
                    + ids.value("uint32", str(rate), fmt=f"{rate} Hz") + ids.value("boolean", "1" if main == "Yes" else "0", fmt=main) + "</row>")
    xml = ('<?xml version="1.0"?>\n<trace-query-result>\n'
           + "<node xpath='//trace-toc[1]/run[1]/data[1]/table[5]'>"
           + schema("device-display-info", ["timestamp", "display-id", "device-name", "max-refresh-rate", "is-main-display"])
           + "\n" + "\n".join(info) + "\n</node>\n"
           + "<node xpath='//trace-toc[1]/run[1]/data[1]/table[12]'>" + schema("display-surface-swap", ["start", "process", "swap-id", "display"])
           + "\n" + "\n".join(rows) + "\n</node>\n</trace-query-result>\n")
    with open(os.path.join(out, "xctrace-display-info.xml"), "w") as f:
        f.write(xml)
    return dict(frames=120, periodNs=16_666_667)


def big(megabytes, path):
    """A time-profile export of about `megabytes` MB: repeated sample rows, ids and refs as xctrace writes them."""
    with open(path, "w") as f:
        f.write('<?xml version="1.0"?>\n<trace-query-result>\n<node xpath=\'//trace-toc[1]/run[1]/data[1]/table[3]\'>')
        f.write(schema("time-profile", ["time", "thread", "process", "weight", "stack"]) + "\n")
        f.write('<row><sample-time id="1" fmt="t">1000000</sample-time><thread id="2" fmt="Main Thread 0x1 (FeedApp, pid: 7)">'
                '<tid id="3" fmt="0x1">1</tid><process id="4" fmt="FeedApp (7)"><pid id="5" fmt="7">7</pid></process></thread>'
                '<process ref="4"/><weight id="6" fmt="1.00 ms">1000000</weight><tagged-backtrace id="7"><backtrace id="8">'
                '<frame id="9" name="FeedRow.body.getter" addr="0x100004a10"><binary id="10" name="FeedApp" load-addr="0x100000000"/></frame>'
                '<frame id="11" name="main" addr="0x100001000"><binary ref="10"/></frame></backtrace></tagged-backtrace></row>\n')
        written, n, t = 0, 12, 2_000_000
        while written < megabytes << 20:
            row = (f'<row><sample-time id="{n}" fmt="00:00.{t // 1000000:03d}">{t}</sample-time><thread ref="2"/><process ref="4"/>'
                   f'<weight ref="6"/><tagged-backtrace ref="7"/></row>\n')
            f.write(row)
            written += len(row)
            n += 1
            t += 1_000_000
        f.write("</node>\n</trace-query-result>\n")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--big":
        big(int(sys.argv[2]), sys.argv[3])
        return
    out = os.path.dirname(os.path.abspath(__file__))
    write(out)


if __name__ == "__main__":
    main()
