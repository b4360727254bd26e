import Foundation
import IO
import Logging
import Signaling

/// Delivers push-hook notices (docs/protocol.md §8): POSTs JSON to the webhook, retries
/// connection errors and 5xx with exponential backoff; a 4xx is final.
final class PushDispatcher {
    let url: String
    let client: HTTPClient
    let attempts: Int
    let backoffMs: Int64
    let capMs: Int64
    let loop: EventLoop
    let log: Logger
    private(set) var delivered = 0
    private(set) var failed = 0

    init(url: String, client: HTTPClient, attempts: Int, backoffMs: Int64, capMs: Int64, loop: EventLoop, log: Logger) {
        self.url = url
        self.client = client
        self.attempts = max(1, attempts)
        self.backoffMs = max(1, backoffMs)
        self.capMs = max(backoffMs, capMs)
        self.loop = loop
        self.log = log
    }

    func enqueue(_ request: PushRequest) {
        send(request, attempt: 1)
    }

    private func send(_ request: PushRequest, attempt: Int) {
        // 10 s: a webhook slower than that is treated as down and retried.
        client.postJSON(url: url, body: Data(request.body.utf8), headers: [:], timeoutSeconds: 10) { [self] result in
            let retry: Bool
            switch result {
            case .success(let status) where (200..<300).contains(status):
                delivered += 1
                log.info("push delivered", ["callID": .string(request.callID), "device": .string(request.device.device),
                                            "attempt": .int(Int64(attempt))])
                return
            case .success(let status):
                retry = status >= 500
                log.warning("push refused", ["callID": .string(request.callID), "status": .int(Int64(status)),
                                             "attempt": .int(Int64(attempt))])
            case .failure(let error):
                retry = true
                log.warning("push failed", ["callID": .string(request.callID), "error": .string(error.code),
                                            "attempt": .int(Int64(attempt))])
            }
            guard retry, attempt < attempts else {
                failed += 1
                return
            }
            let delay = min(capMs, backoffMs << Int64(min(attempt - 1, 30)))
            loop.schedule(afterMilliseconds: delay) { [self] in send(request, attempt: attempt + 1) }
        }
    }
}
