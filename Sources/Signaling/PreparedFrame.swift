/// A client frame parsed before it reaches the hub: on the server's shard thread that read
/// it (``SignalingHub/prepare(_:maxMessageBytes:)``, run as the WebSocket endpoint's
/// `prepare`), so that the hub's thread, which handles every command of the process in
/// turn, does not spend its time on it.
///
/// Why: at 1,000 call setups/s the hub's thread is busy or waiting for a CPU nearly all
/// the time, and every frame it handles waits for the ones before it. Parsing is pure and
/// took ~7 % of that thread's CPU (docs/benchmarks.md, "Parsing on the shards"); the shard
/// threads have time to spare.
///
/// The result is what ``SignalingHub/received(_:prepared:on:time:)`` would have computed
/// itself: the same size check first, then the same parse.
///
/// A class, not a struct: it travels from the shard to the hub as `any Sendable` (the IO
/// module does not know this type) and then sits in the hub's frame queue. As a struct of
/// ~10 words the existential boxed it on the heap, the hub's `as?` cast copied it out field
/// by field (a retain per string and array of the parsed command) and every copy of a queued
/// frame did so again; a reference is cast and copied with one retain
/// (docs/benchmarks.md, "A new machine, and the parsed frame by reference").
public final class PreparedFrame: Sendable, Equatable {
    let message: Result<ClientMessage, WireError>
    /// The frame's `sdp` literal as ``ClientMessage/parse(_:quotedSDP:)`` returned it.
    let quotedSDP: [UInt8]?
    /// The limit the size check used; the hub parses again if its own differs.
    let maxMessageBytes: Int

    init(_ text: String, maxMessageBytes: Int) {
        self.maxMessageBytes = maxMessageBytes
        guard text.utf8.count <= maxMessageBytes else {
            message = .failure(.tooLarge(limit: maxMessageBytes))
            quotedSDP = nil
            return
        }
        var quoted: [UInt8]?
        message = ClientMessage.parse(text, quotedSDP: &quoted)
        quotedSDP = quoted
    }

    public static func == (a: PreparedFrame, b: PreparedFrame) -> Bool {
        a === b || (a.message == b.message && a.quotedSDP == b.quotedSDP && a.maxMessageBytes == b.maxMessageBytes)
    }
}

extension SignalingHub {
    /// Parses `text` for ``received(_:prepared:on:time:)``. Pure: any thread.
    public static func prepare(_ text: String, maxMessageBytes: Int) -> PreparedFrame {
        PreparedFrame(text, maxMessageBytes: maxMessageBytes)
    }
}
