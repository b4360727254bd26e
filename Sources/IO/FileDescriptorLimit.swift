#if canImport(Glibc)
import Glibc
#endif

/// Raises the RLIMIT_NOFILE soft limit to the hard limit (Debian's soft default of 1024 is
/// too low for 10,000+ idle WebSockets; each one is a socket fd). Returns the new soft limit,
/// or nil when the limits cannot be read or changed.
@discardableResult
public func raiseFileDescriptorLimit() -> UInt64? {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
    }
    return UInt64(limit.rlim_cur)
}
