// Installs the OpenSSL-backed types into libsrtp2's crypto kernel (see CSRTPCrypto.h).

#include "CSRTPCrypto.h"

srtp_err_status_t sb_srtp_crypto_install(void)
{
    /* AES-ICM first: libsrtp2's key derivation (RFC 3711 §4.3) runs on it for every profile. */
    srtp_err_status_t status = srtp_replace_cipher_type(&sb_srtp_aes_icm_128_openssl, SRTP_AES_ICM_128);
    if (status != srtp_err_status_ok) {
        return status;
    }
    status = srtp_replace_cipher_type(&sb_srtp_aes_gcm_128_openssl, SRTP_AES_GCM_128);
    if (status != srtp_err_status_ok) {
        return status;
    }
    return srtp_replace_auth_type(&sb_srtp_hmac_sha1_openssl, SRTP_HMAC_SHA1);
}
