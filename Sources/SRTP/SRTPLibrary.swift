import CSRTP
import CSRTPCrypto
#if canImport(Glibc)
import Glibc
#endif

/// Process-wide libsrtp2 initialisation.
///
/// `srtp_init()` registers the crypto kernel and is not thread-safe, so it must run exactly once per
/// process before any `srtp_create`. A Swift `static let` initialiser is run lazily and exactly once
/// under `swift_once`, which gives us the `pthread_once` semantics for free.
///
/// Right after `srtp_init()` the same initialiser replaces libsrtp2's AES-ICM-128, AES-GCM-128 and
/// HMAC-SHA1 with OpenSSL-backed ones (`CSRTPCrypto`, through `srtp_replace_cipher_type` and
/// `srtp_replace_auth_type`): Debian's libsrtp2 is built against NSS, which allocates on every
/// protect/unprotect (issue 3). libsrtp2 keeps the packet format, key derivation, replay list and
/// ROC handling; it runs the new types' known-answer tests (RFC 3711 B.2, RFC 7714 §16.1.1,
/// RFC 2202) and the replaced types' before accepting them, and a failure fails initialisation.
public enum SRTPLibrary {
    /// Environment variable that keeps libsrtp2's built-in (NSS) crypto when set to "1", for
    /// before/after comparisons (docs/benchmarks.md). Read once, at initialisation.
    public static let builtinCryptoEnvironmentKey = "SWITCHBOARD_SRTP_NSS"

    /// Outcome of the one initialisation of this process: `srtp_init()` status, and whether the
    /// OpenSSL types were installed (0 = `srtp_err_status_ok`).
    private static let initResult: (status: UInt32, openSSL: Bool) = {
        let status = srtp_init()
        guard status == srtp_err_status_ok else { return (status.rawValue, false) }
        if let knob = getenv(builtinCryptoEnvironmentKey), String(cString: knob) == "1" {
            return (status.rawValue, false)
        }
        let installed = sb_srtp_crypto_install()
        return (installed.rawValue, installed == srtp_err_status_ok)
    }()

    /// Initialises libsrtp2 once; later calls return the cached outcome.
    public static func ensureInitialized() throws(SRTPError) {
        if initResult.status != srtp_err_status_ok.rawValue {
            throw .libraryFailure(Int32(truncatingIfNeeded: initResult.status))
        }
    }

    /// Whether SRTP runs on the OpenSSL-backed cipher and auth types (false only with
    /// `SWITCHBOARD_SRTP_NSS=1` or before initialisation).
    public static var usesOpenSSLCrypto: Bool { initResult.openSSL }

    /// The linked libsrtp2 version string, e.g. "libsrtp2 2.5.0" (for diagnostics).
    public static var version: String {
        String(cString: srtp_get_version_string())
    }
}
