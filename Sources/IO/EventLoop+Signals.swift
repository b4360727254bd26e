import CSoup
import Foundation

extension EventLoop {
    private final class SignalBox {
        let block: () -> Void
        init(_ block: @escaping () -> Void) { self.block = block }
    }

    /// Runs `block` on the loop thread each time the process receives `signum` (SIGINT,
    /// SIGTERM, SIGHUP). Uses GLib's unix signal source on this loop's context
    /// (https://docs.gtk.org/glib/func.unix_signal_source_new.html), which is race-free,
    /// unlike handlers installed with signal(2) that must hop threads themselves.
    public func onSignal(_ signum: Int32, _ block: @escaping () -> Void) {
        guard let source = g_unix_signal_source_new(signum) else { return }
        let box = Unmanaged.passRetained(SignalBox(block)).toOpaque()
        g_source_set_callback(source, { data in
            guard let data else { return 0 }
            Unmanaged<SignalBox>.fromOpaque(data).takeUnretainedValue().block()
            return 1  // G_SOURCE_CONTINUE: keep handling later signals
        }, box, { data in
            guard let data else { return }
            Unmanaged<SignalBox>.fromOpaque(data).release()
        })
        g_source_attach(source, context)
        g_source_unref(source)
    }
}
