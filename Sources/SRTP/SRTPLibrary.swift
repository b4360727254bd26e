import CSRTP

/// Process-wide libsrtp2 initialisation.
///
/// `srtp_init()` registers the crypto kernel and is not thread-safe, so it must run exactly once per
/// process before any `srtp_create`. A Swift `static let` initialiser is run lazily and exactly once
/// under `swift_once`, which gives us the `pthread_once` semantics for free.
public enum SRTPLibrary {
    /// Result of the one `srtp_init()` call of this process (0 = `srtp_err_status_ok`).
    private static let initStatus: UInt32 = srtp_init().rawValue

    /// Initialises libsrtp2 once; later calls return the cached outcome.
    public static func ensureInitialized() throws(SRTPError) {
        if initStatus != srtp_err_status_ok.rawValue {
            throw .libraryFailure(Int32(truncatingIfNeeded: initStatus))
        }
    }

    /// The linked libsrtp2 version string, e.g. "libsrtp2 2.5.0" (for diagnostics).
    public static var version: String {
        String(cString: srtp_get_version_string())
    }
}
