import Foundation

/// Receives the events of WebSocket connections accepted by an `HTTPServer`.
/// Every method runs on the server's loop thread.
public protocol WebSocketServerDelegate: AnyObject {
    func webSocketDidOpen(_ connection: WebSocketConnection, request: HTTPRequest)
    func webSocket(_ connection: WebSocketConnection, didReceiveText text: String)
    func webSocket(_ connection: WebSocketConnection, didReceiveBinary data: Data)
    /// `code` is the peer's close code, 1006 when the TCP connection ended without one.
    func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16, reason: String)
}
