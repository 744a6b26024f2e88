#!/usr/bin/env bash
# Copies the repository's scenario and campaign files into the scenario
# target's seed corpus (fuzz/corpus/scenario/), named by their path.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/fuzz/corpus/scenario"
mkdir -p "$out"
cd "$root"
find scenarios examples -name '*.toml' | sort | while read -r f; do
    cp "$f" "$out/$(echo "$f" | tr / _)"
done
