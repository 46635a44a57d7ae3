#!/usr/bin/env bash
# Runs a command as on a machine without zlib1g-dev. Where the package is installed, the command
# runs in a private mount namespace (this command only: the machine's files, and every other build
# on it, are untouched) in which each file zlib1g-dev installs is gone: its directories are
# overlays with those files removed, the runtime library (zlib1g) left in place. Needs root
# (unshare -m, overlay mounts).
#   scripts/support/without-zlib-dev.sh COMMAND [ARG...]
# Exit: the command's; 3 (and one line) when zlib1g-dev could not be hidden.
set -euo pipefail
if [ "$(dpkg-query -W -f='${Status}' zlib1g-dev 2>/dev/null)" != "install ok installed" ]; then
    echo "without-zlib-dev: zlib1g-dev is not installed here" >&2
    exec "$@"
fi
if ! unshare -m --propagation private true 2>/dev/null; then
    echo "without-zlib-dev: cannot hide zlib1g-dev (unshare -m needs root)" >&2
    exit 3
fi
dev_files=$(dpkg -L zlib1g-dev | while read -r f; do
    { [ -f "$f" ] || [ -L "$f" ]; } && case "$f" in /usr/share/*) ;; *) echo "$f" ;; esac
done)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export dev_files scratch
unshare -m --propagation private bash -c '
    n=0
    for dir in $(for f in $dev_files; do dirname "$f"; done | sort -u); do
        n=$((n + 1)); mkdir -p "$scratch/$n/upper" "$scratch/$n/work"
        mount -t overlay overlay -o "lowerdir=$dir,upperdir=$scratch/$n/upper,workdir=$scratch/$n/work" "$dir" \
            || { echo "without-zlib-dev: cannot overlay $dir" >&2; exit 3; }
    done
    for f in $dev_files; do rm "$f"; done
    for f in $dev_files; do
        if [ -e "$f" ] || [ -L "$f" ]; then echo "without-zlib-dev: $f is still there" >&2; exit 3; fi
    done
    echo "without-zlib-dev: zlib1g-dev hidden ($(echo $dev_files | wc -w) files: $(echo $dev_files))" >&2
    "$@"
' without-zlib-dev "$@"
