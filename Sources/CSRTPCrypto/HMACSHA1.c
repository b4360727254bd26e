// HMAC-SHA1 (RFC 2104) for SRTP/SRTCP authentication (RFC 3711 §4.2.1) on OpenSSL's SHA-1.
//
// The keyed inner and outer hash states (after the 64-byte ipad/opad blocks) are computed once in
// init; per packet, start copies the inner state and compute finishes both hashes. The states are
// plain SHA_CTX structs, so a copy is a struct assignment: no allocation.
//
// Why the low-level SHA1_* calls (deprecated in OpenSSL 3.0, still exported by libcrypto 3) and
// not EVP: measured with CRYPTO_set_mem_functions on OpenSSL 3.0, EVP_MD_CTX_copy_ex allocates once
// per copy (the provider's dupctx), EVP_DigestInit_ex once, and EVP_MAC_init re-keying twice per
// packet — the per-packet allocations issue 3 removes. The SHA-1 block function is the same
// (SHA-NI / AVX2 assembly) either way.

#define OPENSSL_SUPPRESS_DEPRECATED 1

#include "CSRTPCrypto.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#define SB_SRTP_HMAC_VECTORS 1
#include "SRTPCryptoTestVectors.h"

enum { SB_SHA1_BLOCK = 64, SB_SHA1_DIGEST = 20 };

typedef struct {
    SHA_CTX inner; /* after K XOR ipad */
    SHA_CTX outer; /* after K XOR opad */
    SHA_CTX work;  /* the current message */
} sb_hmac_state;

static srtp_err_status_t sb_hmac_alloc(srtp_auth_pointer_t *ap, int key_len, int out_len)
{
    if (ap == NULL || key_len < 0 || out_len < 0 || out_len > SB_SHA1_DIGEST) {
        return srtp_err_status_bad_param;
    }
    srtp_auth_t *auth = calloc(1, sizeof(srtp_auth_t));
    sb_hmac_state *state = calloc(1, sizeof(sb_hmac_state));
    if (auth == NULL || state == NULL) {
        free(state);
        free(auth);
        return srtp_err_status_alloc_fail;
    }
    auth->type = &sb_srtp_hmac_sha1_openssl;
    auth->state = state;
    auth->out_len = out_len;
    auth->key_len = key_len;
    auth->prefix_len = 0;
    *ap = auth;
    return srtp_err_status_ok;
}

static srtp_err_status_t sb_hmac_dealloc(srtp_auth_pointer_t auth)
{
    if (auth == NULL) {
        return srtp_err_status_bad_param;
    }
    if (auth->state != NULL) {
        OPENSSL_cleanse(auth->state, sizeof(sb_hmac_state));
        free(auth->state);
    }
    OPENSSL_cleanse(auth, sizeof(*auth));
    free(auth);
    return srtp_err_status_ok;
}

static srtp_err_status_t sb_hmac_init(void *sv, const uint8_t *key, int key_len)
{
    sb_hmac_state *state = sv;
    if (state == NULL || key_len < 0 || (key == NULL && key_len > 0)) {
        return srtp_err_status_bad_param;
    }
    uint8_t block[SB_SHA1_BLOCK];
    uint8_t pad[SB_SHA1_BLOCK];
    memset(block, 0, sizeof(block));
    if (key_len > SB_SHA1_BLOCK) {
        SHA1(key, (size_t)key_len, block); /* RFC 2104 §2: longer keys are hashed first */
    } else if (key_len > 0) {
        memcpy(block, key, (size_t)key_len);
    }
    for (int i = 0; i < SB_SHA1_BLOCK; i++) {
        pad[i] = block[i] ^ 0x36;
    }
    int ok = SHA1_Init(&state->inner) && SHA1_Update(&state->inner, pad, sizeof(pad));
    for (int i = 0; i < SB_SHA1_BLOCK; i++) {
        pad[i] = block[i] ^ 0x5c;
    }
    ok = ok && SHA1_Init(&state->outer) && SHA1_Update(&state->outer, pad, sizeof(pad));
    state->work = state->inner;
    OPENSSL_cleanse(block, sizeof(block));
    OPENSSL_cleanse(pad, sizeof(pad));
    return ok ? srtp_err_status_ok : srtp_err_status_auth_fail;
}

static srtp_err_status_t sb_hmac_start(void *sv)
{
    sb_hmac_state *state = sv;
    state->work = state->inner;
    return srtp_err_status_ok;
}

static srtp_err_status_t sb_hmac_update(void *sv, const uint8_t *message, int octets)
{
    sb_hmac_state *state = sv;
    if (octets < 0 || (message == NULL && octets > 0)) {
        return srtp_err_status_bad_param;
    }
    if (octets > 0 && !SHA1_Update(&state->work, message, (size_t)octets)) {
        return srtp_err_status_auth_fail;
    }
    return srtp_err_status_ok;
}

/* Adds `message`, finishes the MAC and writes its first tag_len bytes to `tag`. */
static srtp_err_status_t sb_hmac_compute(void *sv, const uint8_t *message, int octets, int tag_len, uint8_t *tag)
{
    sb_hmac_state *state = sv;
    if (tag_len < 0 || tag_len > SB_SHA1_DIGEST || tag == NULL) {
        return srtp_err_status_bad_param;
    }
    srtp_err_status_t status = sb_hmac_update(sv, message, octets);
    if (status != srtp_err_status_ok) {
        return status;
    }
    uint8_t digest[SB_SHA1_DIGEST];
    SHA_CTX outer = state->outer;
    int ok = SHA1_Final(digest, &state->work)
        && SHA1_Update(&outer, digest, sizeof(digest))
        && SHA1_Final(digest, &outer);
    if (ok) {
        memcpy(tag, digest, (size_t)tag_len);
    }
    OPENSSL_cleanse(&outer, sizeof(outer));
    OPENSSL_cleanse(digest, sizeof(digest));
    return ok ? srtp_err_status_ok : srtp_err_status_auth_fail;
}

const srtp_auth_type_t sb_srtp_hmac_sha1_openssl = {
    sb_hmac_alloc,
    sb_hmac_dealloc,
    sb_hmac_init,
    sb_hmac_compute,
    sb_hmac_update,
    sb_hmac_start,
    "HMAC-SHA1 using OpenSSL libcrypto (Switchboard)",
    &sb_hmac_test_cases,
    SRTP_HMAC_SHA1,
};
