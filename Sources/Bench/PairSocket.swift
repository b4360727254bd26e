import IO

/// What a ``BenchDevice`` needs from its WebSocket: text in, text out, the close. Both
/// pair clients provide it (`--client soup|lean`, ``BenchmarkOptions/client``).
protocol PairSocket: AnyObject {
    var onText: ((String) -> Void)? { get set }
    var onClose: ((UInt16, String) -> Void)? { get set }
    func send(text: String)
    func close(code: UInt16, reason: String)
}

/// The libsoup client of Sources/IO (`--client soup`).
extension WebSocketClient: PairSocket {}

/// How a ``BenchDevice`` connects: libsoup's `WebSocketClient` on the loop's `SoupSession`,
/// or a ``LeanWebSocket`` in the loop's ``LeanSocketLoop``.
enum PairTransport {
    case soup
    case lean(LeanSocketLoop)
}
