#ifndef SWITCHBOARD_COPENSSL_SHIM_H
#define SWITCHBOARD_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/pem.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/bn.h>
#include <openssl/srtp.h>
#include <sys/time.h>

/* Wrappers for OpenSSL macros Swift cannot import (DTLS module). */
static inline int sb_SSL_CTX_set_dtls12_only(SSL_CTX *ctx) {
    return SSL_CTX_set_min_proto_version(ctx, DTLS1_2_VERSION) == 1
        && SSL_CTX_set_max_proto_version(ctx, DTLS1_2_VERSION) == 1;
}
static inline long sb_SSL_set_mtu(SSL *ssl, long mtu) { return SSL_set_mtu(ssl, mtu); }
static inline long sb_DTLS_set_link_mtu(SSL *ssl, long mtu) { return DTLS_set_link_mtu(ssl, mtu); }
/* Returns 1 and fills *out when a DTLS retransmission timer is running, else 0. */
static inline long sb_DTLSv1_get_timeout(SSL *ssl, struct timeval *out) { return DTLSv1_get_timeout(ssl, out); }
static inline long sb_DTLSv1_handle_timeout(SSL *ssl) { return DTLSv1_handle_timeout(ssl); }
static inline long sb_BIO_set_mem_eof_return(BIO *bio, long value) { return BIO_set_mem_eof_return(bio, value); }
static inline EVP_PKEY *sb_EVP_EC_gen_P256(void) { return EVP_EC_gen("P-256"); }
/* DTLS context defaults: no session cache or tickets (one association per SSL, WebRTC never
   resumes), no MTU probing (no socket behind the BIO; the MTU is set with SSL_set_mtu), and
   record buffers released while idle (memory per connected peer). */
static inline void sb_SSL_CTX_dtls_defaults(SSL_CTX *ctx) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_options(ctx, SSL_OP_NO_QUERY_MTU | SSL_OP_NO_TICKET);
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
}
#endif
