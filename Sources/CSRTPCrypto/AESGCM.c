// AES-128-GCM for SRTP/SRTCP (RFC 7714) on OpenSSL's AES-128-GCM.
//
// libsrtp2 forms the 12-byte IV (RFC 7714 §8.1, §9.1) and the AAD (§8.2, §9.2) and calls, per
// packet: set_iv, set_aad (once for RTP, twice for SRTCP: header, then E||index), then either
// encrypt + get_tag, or decrypt over ciphertext || tag.
//
// Allocation: the EVP_CIPHER_CTX is created in alloc; per packet the context is re-initialised
// with only the IV (EVP_CipherInit_ex with NULL cipher and key), and update/final/tag controls
// allocate nothing (OpenSSL 3.0, measured).

#include "CSRTPCrypto.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#define SB_SRTP_GCM_VECTORS 1
#include "SRTPCryptoTestVectors.h"

enum { SB_GCM_KEY = 16, SB_GCM_SALT = 12, SB_GCM_IV = 12 };

typedef struct {
    EVP_CIPHER_CTX *ctx;
    int tag_len;
    srtp_cipher_direction_t direction;
} sb_gcm_state;

static srtp_err_status_t sb_gcm_alloc(srtp_cipher_pointer_t *cp, int key_len, int tag_len)
{
    /* RFC 7714 §14.2 uses 16-byte tags; libsrtp2 also offers 8 (its *_8_auth policies). */
    if (cp == NULL || key_len != SB_GCM_KEY + SB_GCM_SALT || (tag_len != 16 && tag_len != 8)) {
        return srtp_err_status_bad_param;
    }
    srtp_cipher_t *cipher = calloc(1, sizeof(srtp_cipher_t));
    sb_gcm_state *state = calloc(1, sizeof(sb_gcm_state));
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (cipher == NULL || state == NULL || ctx == NULL) {
        EVP_CIPHER_CTX_free(ctx);
        free(state);
        free(cipher);
        return srtp_err_status_alloc_fail;
    }
    state->ctx = ctx;
    state->tag_len = tag_len;
    state->direction = srtp_direction_any;
    cipher->type = &sb_srtp_aes_gcm_128_openssl;
    cipher->state = state;
    cipher->key_len = key_len;
    cipher->algorithm = SRTP_AES_GCM_128;
    *cp = cipher;
    return srtp_err_status_ok;
}

static srtp_err_status_t sb_gcm_dealloc(srtp_cipher_pointer_t cipher)
{
    if (cipher == NULL) {
        return srtp_err_status_bad_param;
    }
    sb_gcm_state *state = cipher->state;
    if (state != NULL) {
        EVP_CIPHER_CTX_free(state->ctx);
        OPENSSL_cleanse(state, sizeof(*state));
        free(state);
    }
    OPENSSL_cleanse(cipher, sizeof(*cipher));
    free(cipher);
    return srtp_err_status_ok;
}

/* key: the 16-byte AES key (the salt after it is libsrtp2's, for the IV). */
static srtp_err_status_t sb_gcm_init(void *cv, const uint8_t *key)
{
    sb_gcm_state *state = cv;
    if (state == NULL || key == NULL) {
        return srtp_err_status_bad_param;
    }
    state->direction = srtp_direction_any;
    if (EVP_CipherInit_ex(state->ctx, EVP_aes_128_gcm(), NULL, NULL, NULL, 1) != 1
        || EVP_CIPHER_CTX_ctrl(state->ctx, EVP_CTRL_GCM_SET_IVLEN, SB_GCM_IV, NULL) != 1
        || EVP_CipherInit_ex(state->ctx, NULL, NULL, key, NULL, 1) != 1) {
        return srtp_err_status_init_fail;
    }
    return srtp_err_status_ok;
}

/* iv: 12 bytes. */
static srtp_err_status_t sb_gcm_set_iv(void *cv, uint8_t *iv, srtp_cipher_direction_t direction)
{
    sb_gcm_state *state = cv;
    if (direction != srtp_direction_encrypt && direction != srtp_direction_decrypt) {
        return srtp_err_status_bad_param;
    }
    state->direction = direction;
    if (EVP_CipherInit_ex(state->ctx, NULL, NULL, NULL, iv, direction == srtp_direction_encrypt ? 1 : 0) != 1) {
        return srtp_err_status_init_fail;
    }
    return srtp_err_status_ok;
}

/* Adds AAD; may be called more than once before the first encrypt/decrypt. */
static srtp_err_status_t sb_gcm_set_aad(void *cv, const uint8_t *aad, uint32_t aad_len)
{
    sb_gcm_state *state = cv;
    if (state->direction == srtp_direction_any || aad_len > INT_MAX) {
        return srtp_err_status_bad_param;
    }
    if (aad_len == 0) {
        return srtp_err_status_ok;
    }
    int out = 0;
    if (EVP_CipherUpdate(state->ctx, NULL, &out, aad, (int)aad_len) != 1) {
        return srtp_err_status_algo_fail;
    }
    return srtp_err_status_ok;
}

/* Encrypts in place; the tag follows with get_tag. SRTCP with E=0 calls this with no data. */
static srtp_err_status_t sb_gcm_encrypt(void *cv, uint8_t *buffer, unsigned int *octets)
{
    sb_gcm_state *state = cv;
    if (state->direction != srtp_direction_encrypt) {
        return srtp_err_status_bad_param;
    }
    if (*octets == 0) {
        return srtp_err_status_ok;
    }
    if (buffer == NULL || *octets > INT_MAX) {
        return srtp_err_status_bad_param;
    }
    int out = 0;
    if (EVP_CipherUpdate(state->ctx, buffer, &out, buffer, (int)*octets) != 1 || out != (int)*octets) {
        return srtp_err_status_cipher_fail;
    }
    return srtp_err_status_ok;
}

/* Finishes the encryption and writes the tag (tag_len bytes) to `tag`. */
static srtp_err_status_t sb_gcm_get_tag(void *cv, uint8_t *tag, uint32_t *len)
{
    sb_gcm_state *state = cv;
    if (state->direction != srtp_direction_encrypt || tag == NULL || len == NULL) {
        return srtp_err_status_bad_param;
    }
    uint8_t none[16];
    int out = 0;
    if (EVP_CipherFinal_ex(state->ctx, none, &out) != 1
        || EVP_CIPHER_CTX_ctrl(state->ctx, EVP_CTRL_GCM_GET_TAG, state->tag_len, tag) != 1) {
        return srtp_err_status_algo_fail;
    }
    *len = (uint32_t)state->tag_len;
    return srtp_err_status_ok;
}

/* Verifies and decrypts ciphertext || tag in place; on success *octets excludes the tag. */
static srtp_err_status_t sb_gcm_decrypt(void *cv, uint8_t *buffer, unsigned int *octets)
{
    sb_gcm_state *state = cv;
    if (state->direction != srtp_direction_decrypt) {
        return srtp_err_status_bad_param;
    }
    if (buffer == NULL || *octets < (unsigned int)state->tag_len || *octets > INT_MAX) {
        return srtp_err_status_bad_param;
    }
    int body = (int)*octets - state->tag_len;
    if (EVP_CIPHER_CTX_ctrl(state->ctx, EVP_CTRL_GCM_SET_TAG, state->tag_len, buffer + body) != 1) {
        return srtp_err_status_auth_fail;
    }
    int out = 0;
    if (body > 0 && (EVP_CipherUpdate(state->ctx, buffer, &out, buffer, body) != 1 || out != body)) {
        return srtp_err_status_cipher_fail;
    }
    uint8_t none[16];
    if (EVP_CipherFinal_ex(state->ctx, none, &out) != 1) {
        return srtp_err_status_auth_fail; /* tag mismatch */
    }
    *octets = (unsigned int)body;
    return srtp_err_status_ok;
}

const srtp_cipher_type_t sb_srtp_aes_gcm_128_openssl = {
    sb_gcm_alloc,
    sb_gcm_dealloc,
    sb_gcm_init,
    sb_gcm_set_aad,
    sb_gcm_encrypt,
    sb_gcm_decrypt,
    sb_gcm_set_iv,
    sb_gcm_get_tag,
    "AES-128 GCM using OpenSSL libcrypto (Switchboard)",
    &sb_gcm_test_cases,
    SRTP_AES_GCM_128,
};
