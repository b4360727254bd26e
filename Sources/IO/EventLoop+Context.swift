import CSoup

extension EventLoop {
    /// The loop's `GMainContext`, for GLib-based libraries that attach their own sources to
    /// it (e.g. a libnice `NiceAgent` created with `nice_agent_new_full(context, …)`), so
    /// their callbacks run on this loop's thread like every other callback of the loop.
    /// Owned by the loop: do not unref.
    public var glibContext: OpaquePointer { context }
}
