#!/usr/bin/env bash
# Fuzzing the parsers (docs/threat-model.md, "Fuzzing").
#
#   scripts/fuzz.sh [target] [seconds]        libFuzzer (-sanitize=fuzzer), default 120 s per target
#   FUZZ_TARGET=rtcp scripts/fuzz.sh          same, target from the environment
#   scripts/fuzz.sh all 300                   every target in turn
#   FUZZ_SANITIZE=fuzzer,address scripts/fuzz.sh signaling
#                                             with AddressSanitizer too (build path .build/fuzz-address;
#                                             one combined -sanitize=: of several, swiftc keeps the last)
#   scripts/fuzz.sh --replay [args…]          no sanitizer: corpus + seeded mutations (what CI runs)
#
# Targets: rtp rtcp transport-cc stun sdp signaling dtls-record router.
# libFuzzer grows a working corpus in .build/fuzz-work/corpus/<target> (seeds in Tests/Fuzz/Corpus
# stay untouched; copy interesting finds over by hand) and writes crashes to
# .build/fuzz-work/artifacts/<target>/crash-*. Reproduce one with
#   .build/fuzz/release/switchboard-fuzz <target> .build/fuzz-work/artifacts/<target>/crash-…
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=(rtp rtcp transport-cc stun sdp signaling dtls-record router)

if [[ "${1:-}" == "--replay" ]]; then
    shift
    swift build -c release --product switchboard-fuzz
    exec .build/release/switchboard-fuzz --corpus Tests/Fuzz/Corpus "$@"
fi

target="${1:-${FUZZ_TARGET:-}}"
seconds="${2:-${FUZZ_SECONDS:-120}}"
if [[ -z "$target" ]]; then
    echo "usage: scripts/fuzz.sh <target|all> [seconds]   (targets: ${TARGETS[*]})" >&2
    exit 2
fi

sanitize="${FUZZ_SANITIZE:-fuzzer}"
build_path=.build/fuzz
[[ "$sanitize" != "fuzzer" ]] && build_path=".build/fuzz-${sanitize#fuzzer,}"
swift build -c release --product switchboard-fuzz --build-path "$build_path" \
    -Xswiftc -DFUZZING -Xswiftc "-sanitize=$sanitize" -Xswiftc -parse-as-library
binary="$build_path/release/switchboard-fuzz"

run_one() {
    local name="$1"
    mkdir -p ".build/fuzz-work/corpus/$name" ".build/fuzz-work/artifacts/$name"
    echo "== $name: libFuzzer for ${seconds}s"
    # Swift's backtracer would catch the trap first; libFuzzer must see it to save the input.
    # 16 KiB max input: larger than a jumbo datagram and any SDP offer in the corpus.
    SWIFT_BACKTRACE=enable=no FUZZ_TARGET="$name" "$binary" \
        -max_total_time="$seconds" -max_len=16384 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix=".build/fuzz-work/artifacts/$name/" \
        ".build/fuzz-work/corpus/$name" "Tests/Fuzz/Corpus/$name"
}

if [[ "$target" == "all" ]]; then
    status=0
    for name in "${TARGETS[@]}"; do run_one "$name" || status=$?; done
    exit "$status"
fi
run_one "$target"
