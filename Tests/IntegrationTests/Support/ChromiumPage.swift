import Foundation
import IO

/// One Chromium tab over its own DevTools WebSocket. Calls block the test thread with a
/// bounded timeout; CDP replies are matched by `id` on the loop thread.
final class ChromiumPage: @unchecked Sendable {
    private let loop: EventLoop
    private let socket: WebSocketClient
    private let lock = NSLock()
    private var nextID = 0
    private var waiting: [Int: (DispatchSemaphore, ResultBox<[String: Any]>)] = [:]

    init(loop: EventLoop, url: String) throws {
        self.loop = loop
        let replies = Replies()
        // 16 MiB: getStats and evaluate results can be large; CDP frames are not split.
        socket = try WebSocketClient.connectBlocking(loop: loop, url: url, maxIncomingPayload: 16 << 20,
                                                     onText: { replies.page?.received($0) })
        replies.page = self
    }

    /// Weak link from the socket callback (installed before `self` exists) to the page.
    private final class Replies: @unchecked Sendable { weak var page: ChromiumPage? }

    private func received(_ text: String) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
              let id = object["id"] as? Int else { return }   // events (no id) are not used
        lock.lock()
        let entry = waiting.removeValue(forKey: id)
        lock.unlock()
        guard let (done, box) = entry else { return }
        if let error = object["error"] as? [String: Any] {
            box.set(.failure(ChromiumError.protocolError("\(error["message"] ?? error)")))
        } else {
            box.set(.success(object["result"] as? [String: Any] ?? [:]))
        }
        done.signal()
    }

    /// Sends one CDP command and waits for its reply.
    func send(_ method: String, _ params: [String: Any] = [:], timeout: Double = 15) throws -> [String: Any] {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<[String: Any]>()
        lock.lock()
        nextID += 1
        let id = nextID
        waiting[id] = (done, box)
        lock.unlock()
        let frame = try JSONSerialization.data(withJSONObject: ["id": id, "method": method, "params": params])
        let text = String(decoding: frame, as: UTF8.self)
        loop.execute { [socket] in socket.send(text: text) }
        if done.wait(timeout: .now() + timeout) == .timedOut {
            lock.lock(); waiting[id] = nil; lock.unlock()
            throw ChromiumError.timeout("\(method) after \(timeout) s")
        }
        guard let result = box.value else { throw ChromiumError.timeout(method) }
        return try result.get()
    }

    /// `Runtime.evaluate` with awaitPromise + returnByValue: the JSON value of `expression`
    /// (a promise is awaited; null/undefined → nil). A thrown exception becomes ``ChromiumError/javascript(_:)``.
    @discardableResult
    func evaluate(_ expression: String, timeout: Double = 15) throws -> Any? {
        let reply = try send("Runtime.evaluate", ["expression": expression, "awaitPromise": true,
                                                  "returnByValue": true, "userGesture": true], timeout: timeout)
        if let details = reply["exceptionDetails"] as? [String: Any] {
            let exception = details["exception"] as? [String: Any]
            throw ChromiumError.javascript("\(exception?["description"] ?? details["text"] ?? details)")
        }
        let value = (reply["result"] as? [String: Any])?["value"]
        return value is NSNull ? nil : value   // JS null and undefined both read as nil
    }

    /// Polls `condition` (a JS expression; a promise is awaited) every 100 ms until true or `timeout`.
    func waitUntil(_ condition: String, timeout: Double = 15) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            if (try? evaluate("Promise.resolve(\(condition)).then(v => !!v)", timeout: 5)) as? Bool == true { return }
            if Date() >= deadline {
                let state = (try? evaluate("JSON.stringify(window.switchboard || null)", timeout: 5)) as? String
                throw ChromiumError.timeout("\(condition) within \(timeout) s; switchboard = \(state ?? "?")")
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// JSON-encodes a Swift string as a JS string literal.
    static func literal(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [text])) ?? Data("[\"\"]".utf8)
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }

    func close() {
        loop.execute { [socket] in socket.close(code: 1000, reason: "done") }
    }
}
