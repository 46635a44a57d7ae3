#!/usr/bin/env bash
# Builds Examples/PlantedCauses (an outside package that depends on this tree by path) and prints the
# path of its executable. Build output goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/../../Examples/PlantedCauses"
swift build >&2
echo "$(swift build --show-bin-path)/PlantedCauses"
