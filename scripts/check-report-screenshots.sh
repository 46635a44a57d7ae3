#!/usr/bin/env bash
# CI check: the reports read on a desktop and on a phone. Takes the single report
# (Reports/feed-naive-120hz.html), the comparison (Reports/feed-compare.html) and a trend page (eight
# runs of Traces/ stored with `hitch history add`, then `hitch history report`), loads each in headless
# Chromium at 1280 and 390 px, and checks in the page itself:
#   1. the page body never overflows sideways (wide tables and charts scroll inside their own box),
#   2. no name is cut: no word of a name (`bdi`, outside the fact lists and the header, whose paths and
#      hashes may wrap anywhere) is split across lines, and none is clipped by an ellipsis or a
#      hidden overflow,
#   3. the trend page's first chart is a hitch figure (a hitch time ratio).
# Screenshots of every page at both widths go to $OUT (default build/artifacts/screenshots, not
# committed). Needs Debian's chromium (scripts/support/browser-check.sh installs it, or FAILS without
# it unless ALLOW_NO_BROWSER=1). Exit 0 = all good, 1 = a check failed.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/build/artifacts/screenshots}
CHECK_NAME=check-report-screenshots
source scripts/support/browser-check.sh
chrome() { timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
  --allow-file-access-from-files --virtual-time-budget=4000 "$@" 2>/dev/null; }

cp Reports/feed-naive-120hz.html "$OUT/single.html"
cp Reports/feed-compare.html "$OUT/comparison.html"
# Eight runs with a step between the fourth and the fifth: the naive feed, then the tuned one.
for i in 1 2 3 4 5 6 7 8; do
  trace=Traces/feed-naive-120hz.fxt; [ "$i" -gt 4 ] && trace=Traces/feed-tuned-120hz.fxt
  "$HITCH" history add "$trace" --commit "c$i" --branch main --db "$OUT/history.sqlite" --machine ci >/dev/null
done
"$HITCH" history report --branch main --db "$OUT/history.sqlite" -o "$OUT/trend.html" >/dev/null

# measure PAGE WIDTH: loads $OUT/PAGE.html at WIDTH in an iframe and prints the in-page measurement (JSON).
measure() {
  local page=$1 width=$2
  cat > "$OUT/measure-$page-$width.html" <<HTML
<!doctype html><html><body style="margin:0"><pre id="result">pending</pre>
<iframe id="f" src="$page.html" style="width:${width}px;height:900px;border:0"></iframe>
<script>
document.getElementById('f').addEventListener('load', function () {
  var d = this.contentDocument, win = this.contentWindow, root = d.documentElement, cut = [];
  d.querySelectorAll('details').forEach(function (x) { x.open = true; });
  function clipped(e) {
    for (var a = e; a && a !== d.body; a = a.parentElement) {
      var s = win.getComputedStyle(a);
      if (s.textOverflow === 'ellipsis' && a.scrollWidth > a.clientWidth) return true;
      if ((s.overflowX === 'hidden' || s.overflowX === 'clip') && a.scrollWidth > a.clientWidth + 1) return true;
    }
    return false;
  }
  d.querySelectorAll('bdi').forEach(function (b) {
    if (b.closest('dl.facts, header.top, footer')) return;
    if (clipped(b)) { cut.push('clipped: ' + b.textContent); return; }
    var walker = d.createTreeWalker(b, NodeFilter.SHOW_TEXT), node;
    while ((node = walker.nextNode())) {
      var re = /[A-Za-z0-9_]+/g, m;
      while ((m = re.exec(node.data))) {
        var r = d.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
        var tops = {}; Array.prototype.forEach.call(r.getClientRects(), function (q) { if (q.width > 0) tops[Math.round(q.top)] = 1; });
        if (Object.keys(tops).length > 1) cut.push('split: ' + m[0] + ' in ' + b.textContent);
      }
    }
  });
  var first = d.querySelector('svg[data-metric]');
  document.getElementById('result').textContent = JSON.stringify({
    scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, names: d.querySelectorAll('bdi').length,
    cut: cut.slice(0, 10), cutCount: cut.length, firstChart: first ? first.getAttribute('data-metric') : null });
});
</script></body></html>
HTML
  chrome --dump-dom "file://$OUT/measure-$page-$width.html" > "$OUT/measure-$page-$width.dom.html"
  python3 - "$OUT/measure-$page-$width.dom.html" <<'PY'
import html, re, sys
m = re.search(r'<pre id="result">(.*?)</pre>', open(sys.argv[1]).read(), re.S)
print(html.unescape(m.group(1)).strip() if m else '{}')
PY
}

# judge PAGE JSON: "ok (…)" or the problems found.
judge() {
  python3 - "$1" "$2" <<'PY'
import json, sys
page, r = sys.argv[1], json.loads(sys.argv[2] or '{}')
problems = []
if 'scrollWidth' not in r: problems.append('no measurement')
else:
    if r['scrollWidth'] > r['clientWidth']: problems.append(f"page body overflows: scrollWidth {r['scrollWidth']} > {r['clientWidth']}")
    if r['names'] == 0: problems.append('no names found to check')
    if r['cutCount']: problems.append(f"{r['cutCount']} names cut: " + '; '.join(r['cut']))
    if page == 'trend':
        first = r.get('firstChart') or ''
        if not (first.startswith('hitches.') and first.endswith('itchTimeRatioMsPerS') and '.byCause.' not in first):
            problems.append(f'first chart is {first!r}, not a hitch time ratio')
print('; '.join(problems) if problems else f"ok ({r['names']} names, width {r['scrollWidth']}/{r['clientWidth']}" + (f", first chart {r['firstChart']}" if page == 'trend' else '') + ')')
PY
}

for page in single comparison trend; do
  for width in 1280 390; do
    result=$(measure "$page" "$width")
    echo "$result" > "$OUT/measure-$page-$width.json"
    verdict=$(judge "$page" "$result")
    case "$verdict" in ok*) pass "$page at ${width}px: $verdict";; *) fail "$page at ${width}px: $verdict";; esac
    chrome --window-size=$width,2400 --screenshot="$OUT/$page-$width.png" "file://$OUT/$page.html" >/dev/null
    [ -s "$OUT/$page-$width.png" ] && pass "screenshot $OUT/$page-$width.png" || fail "no screenshot of $page at ${width}px"
  done
done

# Controls: the same measurement sees a page that does break names mid-word and overflow sideways.
sed 's|</head>|<style>td:first-child,.hbar-label{word-break:break-all;max-width:3em}main{min-width:900px}</style></head>|' \
  "$OUT/single.html" > "$OUT/control.html"
verdict=$(judge control "$(measure control 390)")
case "$verdict" in
  *"names cut"*"split:"*) case "$verdict" in *"page body overflows"*) pass "control: a page with names broken mid-word and a wide body fails";; *) fail "control: overflow not seen ($verdict)";; esac;;
  *) fail "control: names broken mid-word not seen ($verdict)";;
esac

if [ "$failures" -eq 0 ]; then echo "check-report-screenshots: all checks passed (screenshots in $OUT)" >&2; exit 0; fi
echo "check-report-screenshots: $failures check(s) failed (screenshots in $OUT)" >&2
exit 1
