#!/usr/bin/env bash
# Coverage-guided fuzzing of coapcc (docs/fuzzing.md).
#
#   fuzz/run.sh [SECONDS-PER-TARGET] [TARGET...]
#
# Builds the targets with nightly (cargo-fuzz, optimised, with debug
# assertions and overflow checks), then runs each one for SECONDS (default
# 20) over a copy of its kept corpus fuzz/corpus/<target>/ in a temporary
# folder: new inputs found go there, not into the repository. A crash, a
# failed invariant, a timeout or an out-of-memory stops that target; its
# input is written to fuzz/artifacts/<target>/ (ignored by git) and the
# script exits 1 after running the others. Set FUZZ_KEEP=DIR to keep the
# grown corpora (DIR/<target>/) and the logs.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
secs=${1:-20}
shift || true
if [ "$#" -gt 0 ]; then targets=("$@"); else targets=(coap_message tcp_frame scenario); fi
case "$secs" in '' | *[!0-9]*) echo "fuzz/run.sh: SECONDS must be a whole number, got '$secs'" >&2; exit 2 ;; esac

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz/run.sh: cargo-fuzz is not installed (cargo install cargo-fuzz --locked)" >&2
    exit 2
fi

# No sanitizer: every crate fuzzed is #![forbid(unsafe_code)]; the oracle is
# Rust's panics, the targets' assertions and overflow checks (-a).
flags=(+nightly fuzz run --release --debug-assertions --sanitizer none)
cd "$here"
cargo +nightly fuzz build --release --debug-assertions --sanitizer none

work=${FUZZ_KEEP:-$(mktemp -d)}
[ -n "${FUZZ_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
failed=()
for t in "${targets[@]}"; do
    [ -d "corpus/$t" ] || { echo "fuzz/run.sh: no corpus folder fuzz/corpus/$t" >&2; exit 2; }
    mkdir -p "$work/$t" "artifacts/$t"
    cp corpus/"$t"/* "$work/$t/"
    extra=()
    [ -f "dict/$t.dict" ] && extra+=("-dict=$here/dict/$t.dict")
    echo "== $t: ${secs}s over $(ls corpus/"$t" | wc -l) seeds"
    if cargo "${flags[@]}" "$t" "$work/$t" -- \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$here/artifacts/$t/" "${extra[@]}" >"$work/$t.log" 2>&1; then
        # The last status line (execs, cov, ft, corp, exec/s) and the totals.
        grep -E '^#[0-9]+' "$work/$t.log" | tail -n 1
        grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$work/$t.log" | tr '\n' ' '
        echo
    else
        echo "!! $t FAILED: last lines of its log:"
        tail -n 40 "$work/$t.log"
        failed+=("$t")
    fi
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz/run.sh: failed: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
    exit 1
fi
echo "fuzz/run.sh: ${#targets[@]} targets, ${secs}s each, no crash"
