import Foundation
import IO

/// A device's connection to the IM channel, with a blocking API for tests and tools:
/// frames arrive on the event loop's thread and queue up; the caller waits for them.
///
/// Never call the blocking methods on the event loop's own thread.
public final class SignalingClient: @unchecked Sendable {
    public enum ClientError: Error, Equatable {
        case connectFailed(String)
        case timeout(String)
        case closed(code: UInt16, reason: String)
        case unexpected(String)
    }

    public let account: String
    public let device: String
    private let loop: EventLoop
    private var socket: WebSocketClient?
    private let condition = NSCondition()
    private var frames: [ServerFrame] = []
    private var closeInfo: (UInt16, String)?
    private var eventCounter = 0
    /// The highest durable `seq` seen: what a resume sends as its cursor.
    public private(set) var cursor: Int64?
    /// Every durable event's seq in arrival order (tests check for gaps and duplicates).
    public private(set) var receivedSeqs: [Int64] = []
    public private(set) var welcome: ServerFrame?

    /// Connects, sends `hello`, and waits for `welcome` and `caughtUp`.
    /// The frames of the backlog stay queued for `next`/`waitFor`.
    public init(loop: EventLoop, url: String, token: String, account: String, device: String,
                cursor: Int64? = nil, timeout: TimeInterval = 10) throws {
        self.loop = loop
        self.account = account
        self.device = device
        self.cursor = cursor
        let connected = NSCondition()
        var result: Result<WebSocketClient, IOError>?
        WebSocketClient.connect(loop: loop, url: url, headers: [:], maxIncomingPayload: 1 << 20) { r in
            connected.lock(); result = r; connected.signal(); connected.unlock()
        }
        connected.lock()
        let deadline = Date(timeIntervalSinceNow: timeout)
        while result == nil, connected.wait(until: deadline) {}
        connected.unlock()
        guard let result else { throw ClientError.timeout("connect") }
        switch result {
        case .failure(let error): throw ClientError.connectFailed("\(error)")
        case .success(let socket):
            self.socket = socket
        }
        loop.execute { [self] in
            socket?.onText = { [weak self] text in self?.received(text) }
            socket?.onClose = { [weak self] code, reason in self?.closed(code, reason) }
        }
        var hello = "{\"v\":1,\"type\":\"hello\",\"token\":\"\(token)\""
        if let cursor { hello += ",\"cursor\":\"\(cursor)\"" }
        hello += "}"
        sendRaw(hello)
        welcome = try waitFor(timeout: timeout) { $0.type == "welcome" }
        _ = try waitFor(timeout: timeout, remove: false) { $0.type == "caughtUp" }
    }

    private func received(_ text: String) {
        guard let frame = ServerFrame(text: text) else { return }
        condition.lock()
        if let seq = frame.seq {
            receivedSeqs.append(seq)
            cursor = max(cursor ?? 0, seq)
        }
        frames.append(frame)
        condition.broadcast()
        condition.unlock()
    }

    private func closed(_ code: UInt16, _ reason: String) {
        condition.lock()
        closeInfo = (code, reason)
        condition.broadcast()
        condition.unlock()
    }

    /// Sends text as is (tests use it for malformed input).
    public func sendRaw(_ text: String) {
        loop.execute { [socket] in socket?.send(text: text) }
    }

    /// Sends a command and returns its eventID. `fields` are JSON values already encoded.
    @discardableResult
    public func command(_ type: String, eventID: String? = nil, _ fields: [String: Any] = [:]) -> String {
        condition.lock()
        eventCounter += 1
        let id = eventID ?? "\(device)-\(eventCounter)-\(UInt32.random(in: 0...UInt32.max))"
        condition.unlock()
        var object = fields
        object["v"] = 1
        object["type"] = type
        object["eventID"] = id
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
        sendRaw(String(decoding: data, as: UTF8.self))
        return id
    }

    /// Sends a command and waits for its `result`.
    public func request(_ type: String, eventID: String? = nil, _ fields: [String: Any] = [:],
                        timeout: TimeInterval = 10) throws -> ServerFrame {
        let id = command(type, eventID: eventID, fields)
        return try waitFor(timeout: timeout) { $0.type == "result" && $0.eventID == id }
    }

    /// Waits for the first queued frame matching `predicate` and removes it from the queue
    /// (frames before it stay queued).
    @discardableResult
    public func waitFor(timeout: TimeInterval = 10, remove: Bool = true,
                        _ predicate: (ServerFrame) -> Bool) throws -> ServerFrame {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let index = frames.firstIndex(where: predicate) {
                let frame = frames[index]
                if remove { frames.remove(at: index) }
                return frame
            }
            if let (code, reason) = closeInfo { throw ClientError.closed(code: code, reason: reason) }
            if !condition.wait(until: deadline) {
                throw ClientError.timeout("no matching frame; queued: \(frames.map(\.type))")
            }
        }
    }

    public func waitFor(type: String, callID: String? = nil, timeout: TimeInterval = 10) throws -> ServerFrame {
        try waitFor(timeout: timeout) { $0.type == type && (callID == nil || $0.callID == callID) }
    }

    /// Frames queued and not yet taken.
    public var pending: [ServerFrame] {
        condition.lock(); defer { condition.unlock() }
        return frames
    }

    /// Takes every queued frame.
    public func drain() -> [ServerFrame] {
        condition.lock(); defer { condition.unlock() }
        let all = frames
        frames.removeAll()
        return all
    }

    /// Waits until the server closes this connection; returns its code and reason.
    public func waitForClose(timeout: TimeInterval = 10) throws -> (code: UInt16, reason: String) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while closeInfo == nil {
            if !condition.wait(until: deadline) { throw ClientError.timeout("close") }
        }
        return closeInfo!
    }

    public var isClosed: Bool {
        condition.lock(); defer { condition.unlock() }
        return closeInfo != nil
    }

    public func close() {
        loop.execute { [socket] in socket?.close(code: 1000, reason: "bye") }
    }
}
