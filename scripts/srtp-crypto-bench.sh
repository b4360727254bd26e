#!/bin/sh
# SRTP crypto micro-benchmark at -O2, without building the Swift package (docs/benchmarks.md,
# "SRTP on OpenSSL types"): compiles Sources/CSRTPCrypto with a small C driver and prints
# thread-CPU ns per srtp_protect / srtp_unprotect of a 1200-byte RTP packet for AES-GCM and
# AES-CM-HMAC-SHA1-80, first with libsrtp2's built-in (Debian: NSS) types, then with the
# OpenSSL types installed (sb_srtp_crypto_install), plus heap allocations per call.
# Usage: scripts/srtp-crypto-bench.sh [packets]   (default 200000)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/bench.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "CSRTPCrypto.h"

/* Counts malloc/calloc/realloc calls while `counting` is set (free is not counted). */
static int counting;
static unsigned long allocations;
extern void *__libc_malloc(size_t), *__libc_calloc(size_t, size_t), *__libc_realloc(void *, size_t);
void *malloc(size_t n) { if (counting) allocations++; return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { if (counting) allocations++; return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { if (counting) allocations++; return __libc_realloc(p, n); }

static double cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void run(const char *name, int gcm, int packets, const char *types) {
    uint8_t key[30];
    for (int i = 0; i < 30; i++) key[i] = (uint8_t)(i * 11 + 3);
    srtp_policy_t tx, rx;
    memset(&tx, 0, sizeof tx);
    if (gcm) {
        srtp_crypto_policy_set_aes_gcm_128_16_auth(&tx.rtp);
        srtp_crypto_policy_set_aes_gcm_128_16_auth(&tx.rtcp);
    } else {
        srtp_crypto_policy_set_rtp_default(&tx.rtp);
        srtp_crypto_policy_set_rtcp_default(&tx.rtcp);
    }
    tx.key = key;
    tx.window_size = 1024;
    tx.allow_repeat_tx = 1;
    rx = tx;
    tx.ssrc.type = ssrc_any_outbound;
    rx.ssrc.type = ssrc_any_inbound;
    srtp_t s, r;
    if (srtp_create(&s, &tx) || srtp_create(&r, &rx)) { fprintf(stderr, "srtp_create failed\n"); exit(1); }
    enum { BATCH = 1000, STRIDE = 1536 };
    static uint8_t buf[BATCH * STRIDE];
    static int lens[BATCH];
    double protect = 0, unprotect = 0;
    unsigned long allocs = 0;
    int rounds = packets / BATCH, warm = rounds / 10 + 1, seq = 0;
    for (int round = 0; round < warm + rounds; round++) {
        for (int i = 0; i < BATCH; i++, seq++) {
            uint8_t *p = buf + i * STRIDE;
            memset(p, 0x5a, 1200);
            p[0] = 0x80; p[1] = 111; p[2] = (uint8_t)(seq >> 8); p[3] = (uint8_t)seq;
            p[8] = 1; p[9] = 2; p[10] = 3; p[11] = 4;
            lens[i] = 1200;
        }
        unsigned long a0 = allocations;
        counting = 1;
        srtp_err_status_t st = 0;
        double t0 = cpu_ns();
        for (int i = 0; i < BATCH; i++) st |= srtp_protect(s, buf + i * STRIDE, &lens[i]);
        double t1 = cpu_ns();
        for (int i = 0; i < BATCH; i++) st |= srtp_unprotect(r, buf + i * STRIDE, &lens[i]);
        double t2 = cpu_ns();
        counting = 0;
        if (st || lens[BATCH - 1] != 1200) { fprintf(stderr, "round trip failed (%d)\n", st); exit(1); }
        if (round >= warm) { /* warm-up rounds: stream creation allocates once per SSRC */
            protect += t1 - t0;
            unprotect += t2 - t1;
            allocs += allocations - a0;
        }
    }
    double n = (double)rounds * BATCH;
    printf("%-28s %-22s protect %6.0f ns  unprotect %6.0f ns  allocations per protect+unprotect %.1f\n",
           name, types, protect / n, unprotect / n, allocs / n);
    srtp_dealloc(s);
    srtp_dealloc(r);
}

int main(int argc, char **argv) {
    int packets = argc > 1 ? atoi(argv[1]) : 200000;
    if (srtp_init()) return 1;
    run("SRTP_AEAD_AES_128_GCM", 1, packets, "built-in (NSS)");
    run("SRTP_AES128_CM_HMAC_SHA1_80", 0, packets, "built-in (NSS)");
    if (sb_srtp_crypto_install()) { fprintf(stderr, "sb_srtp_crypto_install failed\n"); return 1; }
    run("SRTP_AEAD_AES_128_GCM", 1, packets, "OpenSSL (CSRTPCrypto)");
    run("SRTP_AES128_CM_HMAC_SHA1_80", 0, packets, "OpenSSL (CSRTPCrypto)");
    return 0;
}
C
cc -O2 -I"$root/Sources/CSRTPCrypto/include" "$work/bench.c" "$root"/Sources/CSRTPCrypto/*.c \
    -o "$work/bench" $(pkg-config --cflags --libs libsrtp2 openssl)
"$work/bench" "${1:-200000}"
