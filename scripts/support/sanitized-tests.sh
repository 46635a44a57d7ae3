# What the sanitized test runs share (sourced first by scripts/check-tsan.sh and check-asan-sampler.sh):
# strict shell options, the package root as the working directory, a log file removed at exit, the
# load test shortened and allowed the sanitizer's resident shadow memory, no Swift backtracer (the
# sanitizer reports), and `status` for the run's exit status.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
export HITCH_LOAD_SECONDS="${HITCH_LOAD_SECONDS:-1}"
export HITCH_LOAD_RSS_SLACK_MB="${HITCH_LOAD_RSS_SLACK_MB:-1024}"
export SWIFT_BACKTRACE=enable=no
status=0
