/// How many frames for one connection in one ``SwitchboardServer/carryOut(_:)`` make it worth
/// corking (Linux `TCP_CORK`, see ``WebSocketConnection/setCorked(_:)``) while they are
/// written. The corking itself happens in ``WebSocketSendBatch``, on the connection's loop.
///
/// A frame written to a loopback or LAN TCP socket normally leaves as its own segment: one
/// pass through the sender's and the receiver's network stack and one wake-up of the
/// receiver per frame. In a group-commit batch a device often gets several frames (a
/// caller's own results and the callee's relayed candidates arrive together), and those can
/// share segments. Corking costs two `setsockopt(2)` calls, so only connections that get at
/// least ``minimumFrames`` frames are corked, never one with a single frame.
enum SendCorking {
    /// 2 frames: a segment's transmit and loopback receive (`__tcp_push_pending_frames`)
    /// cost ~10 µs of the server's CPU per frame in the profile of the "Hub CPU per setup"
    /// section (7.5 % of 3.3 ms over ~25 frames), a `setsockopt` about 1 µs; so corking
    /// already pays for a connection with two frames, and a single frame has nothing to
    /// share its segment with.
    static let minimumFrames = 2
}
