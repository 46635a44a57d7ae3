# Sourced by the browser checks (check-report-in-browser.sh, check-report-screenshots.sh): finds
# Debian's chromium (installing it with apt-get when missing and run as root), sets HITCH to the
# release binary and OUT to an empty folder, and gives the checks' fail/pass counters.
# Without a browser a check FAILS (exit 1): a check that did not run is not a pass. ALLOW_NO_BROWSER=1
# turns that into a SKIPPED line and exit 0, for a machine that cannot install packages.
# Needs: CHECK_NAME (for messages) and OUT (the folder) set by the caller.
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "$CHECK_NAME: installing Debian's chromium (once)…" >&2
  (DEBIAN_FRONTEND=noninteractive apt-get install -y chromium >/dev/null 2>&1 \
    || { apt-get update >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium >/dev/null 2>&1; }) || true
  CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
fi
if [ -z "$CHROMIUM" ]; then
  if [ "${ALLOW_NO_BROWSER:-0}" = 1 ]; then
    echo "$CHECK_NAME: SKIPPED (ALLOW_NO_BROWSER=1): chromium is not installed (apt-get install -y chromium)" >&2
    exit 0
  fi
  echo "$CHECK_NAME: FAILED: chromium is not installed and could not be installed (apt-get install -y chromium); set ALLOW_NO_BROWSER=1 to skip" >&2
  exit 1
fi
HITCH=$(bash scripts/release-hitch.sh)
rm -rf "$OUT"; mkdir -p "$OUT"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok:   $*" >&2; }
