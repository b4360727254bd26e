import Signaling

/// The signaling v1 JSON envelope (`ClientMessage.parse`, Sources/Signaling; used read-only).
/// Invariant beyond "never traps": parsing is a pure function (the same frame gives the same
/// result twice), since the hub relies on a rejected frame staying rejected.
enum SignalingFuzz {
    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        let text = String(decoding: bytes, as: UTF8.self)
        let first = ClientMessage.parse(text)
        let second = ClientMessage.parse(text)
        if case .success = first { FuzzCounters.hit("signaling.accepted") }
        try expect(String(describing: first) == String(describing: second), "parse is not deterministic")
    }
}
