import CGLibLog

/// Switchboard's `g_log` in place of GLib's (Sources/CGLibLog/GLibLog.c): libsoup's debug
/// messages, which GLib would format and then drop unless G_MESSAGES_DEBUG asks for them,
/// are dropped before formatting.
public enum GLibLogFilter {
    /// Debug and info messages dropped unformatted since the process started.
    public static var dropped: UInt64 { sb_glib_log_dropped() }
}
