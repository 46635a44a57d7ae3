#!/usr/bin/env bash
# Renders a report of a trace full of hostile names (Tests/Fixtures/hostile-names.json, imported with
# `hitch import chrome`) in headless Chromium and checks that:
#   1. no script from the trace ran (the names try to set document.title and add elements),
#   2. no request left the page (a canary HTTP server on 127.0.0.1:8765, which the names point at,
#      must see nothing; a copy of the report with markup injected past the escaping shows that the
#      page's Content-Security-Policy blocks what escaping would have let through),
#   3. the layout is intact (every section rendered, nothing wider than the window at 1280 and 390 px),
# and leaves screenshots at desktop and phone widths in $OUT (default /tmp/hitch-browser-check).
# Needs Debian's chromium (scripts/support/browser-check.sh installs it, or FAILS without it unless
# ALLOW_NO_BROWSER=1). Exit 0 = all good, 1 = a check failed or could not run.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/hitch-browser-check}
CHECK_NAME=check-report-in-browser
source scripts/support/browser-check.sh

"$HITCH" import chrome Tests/Fixtures/hostile-names.json -o "$OUT/hostile.fxt" 2>"$OUT/import.log"
"$HITCH" report "$OUT/hostile.fxt" -o "$OUT/hostile.html" --title "$(printf '<script>document.title="PWNED"</script> hostile names')"

# The canary server logs every request it gets.
python3 - "$OUT/canary.log" <<'PY' &
import http.server, sys
log = open(sys.argv[1], "a", buffering=1)
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        log.write(self.path + "\n"); self.send_response(200); self.end_headers(); self.wfile.write(b"x")
    do_POST = do_GET
    def log_message(self, *args): pass
http.server.HTTPServer(("127.0.0.1", 8765), Handler).serve_forever()
PY
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1', 8765), 0.2)" 2>/dev/null && break; sleep 0.1; done

chrome() { timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
  --allow-file-access-from-files --virtual-time-budget=4000 "$@" 2>/dev/null; }

# 1. No script from the trace ran, no element from it was created.
chrome --dump-dom "file://$OUT/hostile.html" > "$OUT/hostile.dom.html"
[ -s "$OUT/hostile.dom.html" ] || fail "chromium produced no DOM"
grep -q '<title>PWNED</title>' "$OUT/hostile.dom.html" && fail "a script from the trace set document.title" || pass "document.title untouched"
grep -q '<div id="pwned-element"' "$OUT/hostile.dom.html" && fail "markup from the trace created an element" || pass "no element created from trace text"
scripts=$(grep -o '<script' "$OUT/hostile.dom.html" | wc -l)
[ "$scripts" -eq 1 ] && pass "exactly one script element (the page's own)" || fail "$scripts script elements in the DOM"
for tag in '<img' '<iframe' '<link' '<svg onload'; do
  grep -qi "$tag" "$OUT/hostile.dom.html" && fail "DOM contains $tag" || pass "no $tag in the DOM"
done
grep -q '&lt;script&gt;document.title' "$OUT/hostile.dom.html" && pass "hostile names shown as text" || fail "hostile names missing from the page"

# 2. Defence in depth: inject markup past the escaping; the page's CSP must still block it.
sed 's|<body>|<body><img src="http://127.0.0.1:8765/injected-img"><script>document.title="INJECTED"</script><link rel="stylesheet" href="http://127.0.0.1:8765/injected-css">|' \
  "$OUT/hostile.html" > "$OUT/injected.html"
chrome --dump-dom "file://$OUT/injected.html" > "$OUT/injected.dom.html"
grep -q '<title>INJECTED</title>' "$OUT/injected.dom.html" && fail "CSP let an injected inline script run" || pass "CSP blocked an injected inline script"
sleep 0.3
requests=$(grep -c . "$OUT/canary.log" || true)
[ "$requests" -eq 0 ] && pass "no request left the page (the canary server saw none)" || fail "the page made $requests request(s): $(tr '\n' ' ' < "$OUT/canary.log")"
# Control: the same injected page without its policy does reach the canary and run the script, so the
# two checks above can see a failure when there is one.
sed 's|<meta http-equiv="Content-Security-Policy" content="[^"]*">||' "$OUT/injected.html" > "$OUT/control.html"
chrome --dump-dom "file://$OUT/control.html" > "$OUT/control.dom.html"
sleep 0.3
grep -q '<title>INJECTED</title>' "$OUT/control.dom.html" && grep -q '^/injected-img$' "$OUT/canary.log" \
  && pass "control: without the policy the injected script runs and the canary sees the request" \
  || fail "control: the harness did not detect an unprotected page (canary: $(tr '\n' ' ' < "$OUT/canary.log"))"

# 3. Layout: every section rendered, nothing wider than the window, at desktop and phone widths.
sections=$(grep -o '<section class="card"' "$OUT/hostile.dom.html" | wc -l)
[ "$sections" -ge 6 ] && pass "$sections sections rendered" || fail "only $sections sections rendered"
for width in 1280 390; do
  cat > "$OUT/measure-$width.html" <<HTML
<!doctype html><html><body style="margin:0"><pre id="result">pending</pre>
<iframe id="f" src="hostile.html" style="width:${width}px;height:900px;border:0"></iframe>
<script>
document.getElementById('f').addEventListener('load', function () {
  var d = this.contentDocument, root = d.documentElement, wide = [];
  d.querySelectorAll('section.card').forEach(function (s) {
    if (s.getBoundingClientRect().right > root.clientWidth + 1) wide.push(s.id);
  });
  document.getElementById('result').textContent = 'scrollWidth=' + root.scrollWidth + ' clientWidth=' + root.clientWidth +
    ' sections=' + d.querySelectorAll('section.card').length + ' overflowing=' + wide.join(',');
});
</script></body></html>
HTML
  chrome --dump-dom "file://$OUT/measure-$width.html" > "$OUT/measure-$width.dom.html"
  result=$(grep -o 'scrollWidth=[0-9][^<]*' "$OUT/measure-$width.dom.html" || echo "no measurement")
  scroll=$(echo "$result" | sed -n 's/.*scrollWidth=\([0-9]*\).*/\1/p'); client=$(echo "$result" | sed -n 's/.*clientWidth=\([0-9]*\).*/\1/p')
  if [ -n "$scroll" ] && [ "$scroll" -le "$client" ] && echo "$result" | grep -q 'overflowing=$'; then
    pass "layout at ${width}px: $result"
  else
    fail "layout at ${width}px: $result"
  fi
  chrome --window-size=$width,2400 --screenshot="$OUT/hostile-$width.png" "file://$OUT/hostile.html" >/dev/null
  [ -s "$OUT/hostile-$width.png" ] && pass "screenshot $OUT/hostile-$width.png" || fail "no screenshot at ${width}px"
done

# 4. The script's interaction works: clicking a red (hitch) bar shows that frame's details under the chart.
cat > "$OUT/click.html" <<HTML
<!doctype html><html><body><pre id="result">pending</pre>
<iframe id="f" src="hostile.html" style="width:1280px;height:900px;border:0"></iframe>
<script>
document.getElementById('f').addEventListener('load', function () {
  var d = this.contentDocument, link = d.querySelector('svg a'), inspector = d.querySelector('.inspector');
  if (!link || !inspector) { document.getElementById('result').textContent = 'clicked=none'; return; }
  link.querySelector('rect').dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true}));
  document.getElementById('result').textContent = 'clicked=' + link.getAttribute('href') +
    ' inspector=' + inspector.querySelectorAll('details.frame').length + ' open=' + (inspector.querySelector('details[open]') ? 1 : 0);
});
</script></body></html>
HTML
chrome --dump-dom "file://$OUT/click.html" > "$OUT/click.dom.html"
clicked=$(grep -o 'clicked=[^< ]* inspector=[0-9]* open=[0-9]' "$OUT/click.dom.html" || grep -o '<pre id="result">[^<]*' "$OUT/click.dom.html")
echo "$clicked" | grep -q 'inspector=1 open=1' && pass "clicking a hitch bar shows its frame ($clicked)" || fail "frame inspector: $clicked"

# Screenshots of the real reports too, for a look at desktop and phone widths.
for report in Reports/feed-naive-120hz.html Reports/llm-q4_0-120hz.html; do
  [ -f "$report" ] || continue
  for width in 1280 390; do
    chrome --window-size=$width,2400 --screenshot="$OUT/$(basename "$report" .html)-$width.png" "file://$PWD/$report" >/dev/null
  done
done

if [ "$failures" -eq 0 ]; then echo "check-report-in-browser: all checks passed" >&2; exit 0; fi
echo "check-report-in-browser: $failures check(s) failed" >&2
exit 1
