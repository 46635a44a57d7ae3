#!/usr/bin/env bash
# The README's example app (Examples/FrameApp) built the way a user builds it: as an outside
# package that depends on Hitch by version (`.package(url:, from: "0.1.0")`), recorded, and
# analyzed.
#   1. README's "Record your own" includes the example's files verbatim (checked here).
#   2. This working tree (tracked and new files) becomes a git repository tagged 0.1.0 in a
#      temporary directory; the example's dependency URL is pointed at it (the only change).
#   3. The app is built (fails if any library target of Hitch had unsafe flags) as on a machine without
#      zlib1g-dev (HitchTrace needs no zlib; the link line is checked too), run at 60 Hz with present
#      times read from the clock after real waits, and analyzed: its two planted stalls are the
#      trace's hitches, of two periods and one period.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
example=Examples/FrameApp

# 1. The README shows the files this script builds.
for file in Package.swift Sources/FrameApp/main.swift; do
    shown=$(awk -v marker="<!-- example: $example/$file -->" '
        $0 == marker { found = 1; next }
        found && /^```/ { if (inside) exit; inside = 1; next }
        inside { print }' README.md)
    if [ "$shown" != "$(cat "$example/$file")" ]; then
        echo "check-example-app: README.md does not show $example/$file verbatim (after its <!-- example: ... --> marker)"
        exit 1
    fi
done

work=$(mktemp -d /tmp/hitch-example.XXXXXX)
trap 'rm -rf "$work"' EXIT

# 2. Hitch as a versioned git dependency.
mkdir "$work/hitch"
git ls-files -z --cached --others --exclude-standard -- . ':!Traces' ':!Reports' ':!Examples' \
    | while IFS= read -r -d '' file; do [ -e "$file" ] && printf '%s\0' "$file"; done \
    | tar --null -T - -cf - | tar -xf - -C "$work/hitch"
(cd "$work/hitch" && git init -q && git add -A \
    && git -c user.name=check -c user.email=check@localhost commit -qm "Hitch snapshot" && git tag 0.1.0)
cp -R "$example" "$work/app"
rm -rf "$work/app/.build" "$work/app/Package.resolved"
sed -i "s|https://example.com/hitch.git|file://$work/hitch|" "$work/app/Package.swift"
grep -q "file://$work/hitch\", from: \"0.1.0\"" "$work/app/Package.swift" \
    || { echo "check-example-app: could not point the example's dependency at the local clone"; exit 1; }

# 3. Build, run, analyze. The app links HitchTrace alone, which needs no zlib: it is built as on a
#    machine without zlib1g-dev. Where the package is installed, the build runs in a private mount
#    namespace (this build only: the machine's files, and every other build on it, are untouched) in
#    which each file zlib1g-dev installs is gone: its directories are overlays with those files
#    removed, the runtime library (zlib1g) left in place. The link line must not name zlib either.
build_log="$work/build.log"
build_app() { (cd "$work/app" && swift build -v --disable-dependency-cache > "$build_log" 2>&1); }
if dpkg -s zlib1g-dev >/dev/null 2>&1; then
    dev_files=$(dpkg -L zlib1g-dev | while read -r f; do [ -f "$f" ] || [ -L "$f" ] && case "$f" in /usr/share/*) ;; *) echo "$f" ;; esac; done)
    export -f build_app
    export work build_log dev_files
    unshare -m --propagation private bash -c '
        set -e
        n=0
        for dir in $(for f in $dev_files; do dirname "$f"; done | sort -u); do
            n=$((n + 1)); mkdir -p "$work/zlib-hidden/$n/upper" "$work/zlib-hidden/$n/work"
            mount -t overlay overlay -o "lowerdir=$dir,upperdir=$work/zlib-hidden/$n/upper,workdir=$work/zlib-hidden/$n/work" "$dir"
        done
        for f in $dev_files; do rm "$f"; done
        for f in $dev_files; do if [ -e "$f" ] || [ -L "$f" ]; then echo "check-example-app: $f is still there"; exit 3; fi; done
        echo "check-example-app: building without zlib1g-dev ($(echo $dev_files | wc -w) files hidden: $(echo $dev_files | tr "\n" " "))"
        build_app
    ' || { status=$?; if [ "$status" = 3 ] || ! grep -q 'Compiling\|Build complete\|error' "$build_log" 2>/dev/null; then
               echo "check-example-app: could not hide zlib1g-dev for the build (unshare -m and overlay mounts need root; exit $status)"; exit 1
           fi; }
else
    echo "check-example-app: building on a machine without zlib1g-dev"
    build_app || true
fi
grep -E "error|warning:|Compiling FrameApp|Build complete" "$build_log" | grep -v -- " -frontend " || true
app="$work/app/.build/debug/FrameApp"
[ -x "$app" ] || { echo "check-example-app: the example app did not build as an outside package (without zlib1g-dev)"; tail -20 "$build_log"; exit 1; }
if grep -E '(^| )-lz( |$)|libz\.(so|a)' "$build_log" | grep -q .; then
    echo "check-example-app: the app's build links zlib:"; grep -E '(^| )-lz( |$)|libz\.(so|a)' "$build_log" | head -3; exit 1
fi
grep -q '"version" : "0.1.0"' "$work/app/Package.resolved" \
    || { echo "check-example-app: the dependency did not resolve to version 0.1.0"; cat "$work/app/Package.resolved"; exit 1; }
# The analyzer: $HITCH when set (a build from elsewhere), else this checkout's debug build.
if [ -n "${HITCH:-}" ]; then hitch=$HITCH; else
    swift build --product hitch >/dev/null
    hitch="$(swift build --show-bin-path)/hitch"
fi
trace="$work/frameapp.fxt"
"$app" "$trace"
"$hitch" analyze "$trace" --refresh 60 | sed -n '1,25p'
# On a machine busier than twice its cores the app's own 2 ms of work per frame can take a period of
# wall time, and those frames really are late (a stalled frame too, by a period more): then the
# planted frames must hitch at least as expected, and the other hitches are counted, not failed.
load=$(cut -d' ' -f1 /proc/loadavg)
cores=$(nproc)
# Even below that load, a shared machine now and then runs another process through one of the
# app's 180 vsyncs: the planted frames must hitch by exactly their stall, and at most 9 of the
# other 178 frames (5%) may hitch too.
only_planted='{"metric": "hitches.60.hitchCount", "min": 2, "max": 11, "name": "the planted stalls hitch, and at most 9 other frames"}'
frame60_max=34.4 frame120_max=17.7
if awk -v load="$load" -v cores="$cores" 'BEGIN { exit !(load > 2 * cores) }'; then
    echo "check-example-app: load average $load on $cores cores: not requiring that only the planted frames hitch"
    only_planted='{"metric": "hitches.60.hitchCount", "min": 2, "name": "the planted stalls hitch (machine overloaded)"}'
    frame60_max=1000 frame120_max=1000
fi
cat > "$work/budget.json" <<JSON
{"budgets": [
  {"metric": "hitches.60.frameCount", "min": 180, "max": 180, "name": "every frame judged"},
  {"metric": "frames[60].hitchMs", "min": 32.3, "max": $frame60_max, "name": "frame 60 (40 ms stall): two periods"},
  {"metric": "frames[120].hitchMs", "min": 15.6, "max": $frame120_max, "name": "frame 120 (25 ms stall): one period"},
  $only_planted
]}
JSON
echo "load average: $(cat /proc/loadavg)"
"$hitch" check "$trace" --budget "$work/budget.json"
echo "check-example-app: the example app built against Hitch 0.1.0 as a package dependency; its planted stalls are its hitches"
