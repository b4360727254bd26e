#ifndef SWITCHBOARD_CSRTPCRYPTO_H
#define SWITCHBOARD_CSRTPCRYPTO_H

// OpenSSL (libcrypto) implementations of the libsrtp2 cipher and auth types SRTP needs, installed
// into libsrtp2's crypto kernel with its public replacement API (srtp_replace_cipher_type,
// srtp_replace_auth_type; <srtp2/cipher.h>, <srtp2/auth.h>).
//
// Why (issue 3, "no per-packet heap allocation on the forwarding path"): Debian builds libsrtp2
// 2.5.0 against NSS, which allocates on every srtp_protect/unprotect (PK11 contexts, locks: 5
// allocations per AES-GCM call, 14 per AES-CM + HMAC-SHA1 call). These types allocate their
// OpenSSL state once in `alloc` (per session key) and per packet only re-key the IV, update,
// finalise and read the tag, which allocates nothing (measured; see docs/benchmarks.md).
//
// libsrtp2 keeps the SRTP packet transforms (RFC 3711 §3-4, RFC 7714 §7-9): IV formation, AAD,
// replay list, ROC estimation and the key derivation (RFC 3711 §4.3), which itself runs on the
// replaced AES-ICM type.

#include <srtp2/srtp.h>
#include <srtp2/cipher.h>
#include <srtp2/auth.h>

#ifdef __cplusplus
extern "C" {
#endif

/// AES-128 in SRTP's integer counter mode (RFC 3711 §4.1.1), cipher id SRTP_AES_ICM_128.
/// Key material is the 16-byte key followed by the 14-byte salt (key_len 30).
extern const srtp_cipher_type_t sb_srtp_aes_icm_128_openssl;

/// AES-128-GCM (RFC 7714), cipher id SRTP_AES_GCM_128. Key material is the 16-byte key followed
/// by the 12-byte salt (key_len 28; the salt is used by libsrtp2 for the IV, not by the cipher).
/// Tags of 16 or 8 bytes.
extern const srtp_cipher_type_t sb_srtp_aes_gcm_128_openssl;

/// HMAC-SHA1 (RFC 2104; RFC 3711 §4.2.1), auth id SRTP_HMAC_SHA1. Tags up to 20 bytes.
extern const srtp_auth_type_t sb_srtp_hmac_sha1_openssl;

/// Replaces libsrtp2's AES-ICM-128, AES-GCM-128 and HMAC-SHA1 with the types above. Call once,
/// after srtp_init() and before any srtp_create(). libsrtp2 runs each type's own known-answer
/// test data and the replaced type's before accepting it.
/// Returns srtp_err_status_ok or the first failure.
srtp_err_status_t sb_srtp_crypto_install(void);

#ifdef __cplusplus
}
#endif

#endif
