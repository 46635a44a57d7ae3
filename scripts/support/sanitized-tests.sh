# What the sanitized test runs share (sourced first by scripts/check-tsan.sh and check-asan-sampler.sh):
# strict shell options, the package root as the working directory, a log file removed at exit, the
# load test shortened and allowed the sanitizer's resident shadow memory, no Swift backtracer (the
# sanitizer reports), `status` for the run's exit status, and `sanitized_verdict` to end the run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
export HITCH_LOAD_SECONDS="${HITCH_LOAD_SECONDS:-1}"
export HITCH_LOAD_RSS_SLACK_MB="${HITCH_LOAD_RSS_SLACK_MB:-1024}"
export SWIFT_BACKTRACE=enable=no
status=0

# The run's verdict, after the tests ran with their output in $log: a finding of the sanitizer fails
# it, then a non-zero exit status does; else it prints the clean line.
#   sanitized_verdict NAME FINDING-REGEX SANITIZER RERUN-COMMAND CLEAN-LINE
sanitized_verdict() {
    local name=$1 finding=$2 sanitizer=$3 rerun=$4 clean=$5
    if grep -qE "$finding" "$log"; then
        echo "$name: $sanitizer reported a problem (the log above is trimmed; rerun: $rerun)"
        exit 1
    fi
    if [ "$status" != 0 ]; then
        tail -30 "$log"
        echo "$name: tests failed under $sanitizer (exit $status)"
        exit 1
    fi
    echo "$name: $clean"
}
