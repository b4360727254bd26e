import Foundation

/// Receives the events of WebSocket connections accepted by an `HTTPServer`.
/// Every method runs on the server's loop thread.
public protocol WebSocketServerDelegate: AnyObject {
    func webSocketDidOpen(_ connection: WebSocketConnection, request: HTTPRequest)
    func webSocket(_ connection: WebSocketConnection, didReceiveText text: String)
    /// The same with what the endpoint's `prepare` returned for the frame on the reading
    /// loop (nil without one) and the time that loop read the frame
    /// (``EventLoop/monotonicMicroseconds()``), before the hand-off to the server's loop. The
    /// default calls ``webSocket(_:didReceiveText:)``.
    func webSocket(_ connection: WebSocketConnection, didReceiveText text: String, prepared: (any Sendable)?, readAtMicros: Int64)
    func webSocket(_ connection: WebSocketConnection, didReceiveBinary data: Data)
    /// `code` is the peer's close code, 1006 when the TCP connection ended without one.
    func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16, reason: String)
}

extension WebSocketServerDelegate {
    public func webSocket(_ connection: WebSocketConnection, didReceiveText text: String, prepared: (any Sendable)?,
                          readAtMicros: Int64) {
        webSocket(connection, didReceiveText: text)
    }
}
