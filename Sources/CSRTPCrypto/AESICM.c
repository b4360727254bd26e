// AES-128 in SRTP's integer counter mode (RFC 3711 §4.1.1) on OpenSSL's AES-128-CTR.
//
// The counter block is (salt || 0x0000) XOR IV, where libsrtp2 passes the IV as
// 0 || SSRC || packet index || 0x0000 (RFC 3711 §4.1.1) or, for its key derivation, the label in
// octet 7 (RFC 3711 §4.3.1); OpenSSL's CTR mode increments the whole 128-bit block, which equals
// SRTP's 16-bit block counter for packets below 2^16 blocks (1 MiB; RTP packets are far smaller).
//
// Allocation: the EVP_CIPHER_CTX is created in alloc; set_iv re-initialises it with only the IV
// (EVP_EncryptInit_ex with NULL cipher and key) and encrypt is one EVP_EncryptUpdate — neither
// allocates (OpenSSL 3.0, measured).

#include "CSRTPCrypto.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#define SB_SRTP_ICM_VECTORS 1
#include "SRTPCryptoTestVectors.h"

enum { SB_ICM_KEY = 16, SB_ICM_SALT = 14, SB_ICM_KEY_WSALT = SB_ICM_KEY + SB_ICM_SALT };

typedef struct {
    EVP_CIPHER_CTX *ctx;
    uint8_t offset[16]; /* salt || 0x0000 */
} sb_icm_state;

static srtp_err_status_t sb_icm_alloc(srtp_cipher_pointer_t *cp, int key_len, int tag_len)
{
    (void)tag_len;
    if (cp == NULL || key_len != SB_ICM_KEY_WSALT) {
        return srtp_err_status_bad_param;
    }
    srtp_cipher_t *cipher = calloc(1, sizeof(srtp_cipher_t));
    sb_icm_state *state = calloc(1, sizeof(sb_icm_state));
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (cipher == NULL || state == NULL || ctx == NULL) {
        EVP_CIPHER_CTX_free(ctx);
        free(state);
        free(cipher);
        return srtp_err_status_alloc_fail;
    }
    state->ctx = ctx;
    cipher->type = &sb_srtp_aes_icm_128_openssl;
    cipher->state = state;
    cipher->key_len = key_len;
    cipher->algorithm = SRTP_AES_ICM_128;
    *cp = cipher;
    return srtp_err_status_ok;
}

static srtp_err_status_t sb_icm_dealloc(srtp_cipher_pointer_t cipher)
{
    if (cipher == NULL) {
        return srtp_err_status_bad_param;
    }
    sb_icm_state *state = cipher->state;
    if (state != NULL) {
        EVP_CIPHER_CTX_free(state->ctx); /* clears the key schedule */
        OPENSSL_cleanse(state, sizeof(*state));
        free(state);
    }
    OPENSSL_cleanse(cipher, sizeof(*cipher));
    free(cipher);
    return srtp_err_status_ok;
}

/* key: 16-byte AES key followed by the 14-byte salt. */
static srtp_err_status_t sb_icm_init(void *cv, const uint8_t *key)
{
    sb_icm_state *state = cv;
    if (state == NULL || key == NULL) {
        return srtp_err_status_bad_param;
    }
    memset(state->offset, 0, sizeof(state->offset));
    memcpy(state->offset, key + SB_ICM_KEY, SB_ICM_SALT);
    if (EVP_EncryptInit_ex(state->ctx, EVP_aes_128_ctr(), NULL, key, NULL) != 1) {
        return srtp_err_status_init_fail;
    }
    return srtp_err_status_ok;
}

/* iv: 16 bytes. */
static srtp_err_status_t sb_icm_set_iv(void *cv, uint8_t *iv, srtp_cipher_direction_t direction)
{
    (void)direction; /* counter mode: the same operation both ways */
    sb_icm_state *state = cv;
    uint8_t counter[16];
    for (int i = 0; i < 16; i++) {
        counter[i] = state->offset[i] ^ iv[i];
    }
    if (EVP_EncryptInit_ex(state->ctx, NULL, NULL, NULL, counter) != 1) {
        return srtp_err_status_cipher_fail;
    }
    return srtp_err_status_ok;
}

/* Encrypts (or, identically, decrypts) in place, continuing the keystream of the last set_iv. */
static srtp_err_status_t sb_icm_crypt(void *cv, uint8_t *buffer, unsigned int *octets)
{
    sb_icm_state *state = cv;
    if (*octets == 0) {
        return srtp_err_status_ok;
    }
    if (buffer == NULL || *octets > INT_MAX) {
        return srtp_err_status_bad_param;
    }
    int out = 0;
    if (EVP_EncryptUpdate(state->ctx, buffer, &out, buffer, (int)*octets) != 1 || out != (int)*octets) {
        return srtp_err_status_cipher_fail;
    }
    return srtp_err_status_ok;
}

const srtp_cipher_type_t sb_srtp_aes_icm_128_openssl = {
    sb_icm_alloc,
    sb_icm_dealloc,
    sb_icm_init,
    NULL, /* set_aad: not an AEAD */
    sb_icm_crypt,
    sb_icm_crypt,
    sb_icm_set_iv,
    NULL, /* get_tag */
    "AES-128 counter mode using OpenSSL libcrypto (Switchboard)",
    &sb_icm_test_cases,
    SRTP_AES_ICM_128,
};
