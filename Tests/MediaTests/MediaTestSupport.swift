import Foundation
import Glibc
import ICE
import STUN
import XCTest
@testable import Media

/// Thread-safe recorder for what the loop's handlers saw.
final class Recorder {
    struct Packet: Equatable {
        var kind: String
        var session: ICESessionID
        var bytes: [UInt8]
    }

    private let lock = NSLock()
    private var packets: [Packet] = []
    private var events: [ICEEvent] = []
    private var counts: [String: Int] = [:]

    func record(_ kind: String, _ session: ICESessionID, _ bytes: UnsafeRawBufferPointer, keep: Bool = true) {
        lock.lock()
        defer { lock.unlock() }
        counts[kind, default: 0] += 1
        if keep { packets.append(Packet(kind: kind, session: session, bytes: Array(bytes))) }
    }

    func record(_ event: ICEEvent) {
        lock.lock()
        defer { lock.unlock() }
        events.append(event)
    }

    var allPackets: [Packet] { lock.lock(); defer { lock.unlock() }; return packets }
    var allEvents: [ICEEvent] { lock.lock(); defer { lock.unlock() }; return events }
    func count(_ kind: String) -> Int { lock.lock(); defer { lock.unlock() }; return counts[kind] ?? 0 }

    /// Wires all handlers of `loop` to this recorder.
    func attach(to loop: MediaLoop, keepRTP: Bool = true) {
        loop.onDTLS = { [unowned self] _, session, bytes, _ in record("dtls", session, bytes) }
        loop.onRTP = { [unowned self] _, session, bytes, _ in record("rtp", session, bytes, keep: keepRTP) }
        loop.onRTCP = { [unowned self] _, session, bytes, _ in record("rtcp", session, bytes) }
        loop.onICEEvent = { [unowned self] _, event, _ in record(event) }
    }
}

/// Polls `condition` until true or `timeout` seconds pass (a bound for failure, not a
/// timing assertion).
func eventually(timeout: Double = 10, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(timeout)
    while Date() < end {
        if condition() { return true }
        usleep(1_000)
    }
    return condition()
}

extension MediaLoop {
    /// Runs `work` on the loop thread and waits for its result.
    func sync<T>(_ work: @escaping (MediaLoop) -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        var result: T?
        perform { loop in
            result = work(loop)
            done.signal()
        }
        done.wait()
        return result!
    }
}

/// A plain UDP client on 127.0.0.1 with blocking-style helpers built on the batch classes.
final class TestClient {
    let socket: UDPSocket
    let receiveBatch = UDPReceiveBatch(capacity: 64, slotSize: 2048)
    let sendBatch = UDPSendBatch(capacity: 64, slotSize: 4096)

    init(host: String = "127.0.0.1") throws {
        socket = try UDPSocket(host: host, port: 0)
    }

    var address: SocketAddress { socket.localAddress }

    func send(_ bytes: [UInt8], to destination: SocketAddress) {
        bytes.withUnsafeBytes { _ = sendBatch.enqueue($0, to: destination, on: socket) }
        sendBatch.flush(on: socket)
    }

    private var buffered: [[UInt8]] = []

    /// Next datagram within `timeout` seconds.
    func receive(timeout: Double = 5) -> [UInt8]? {
        let end = Date().addingTimeInterval(timeout)
        while buffered.isEmpty && Date() < end {
            var fd = pollfd(fd: socket.fileDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&fd, 1, 50)
            let count = receiveBatch.receive(from: socket)
            for index in 0..<max(0, count) { buffered.append(Array(receiveBatch.datagram(at: index).bytes)) }
        }
        return buffered.isEmpty ? nil : buffered.removeFirst()
    }
}

/// Credentials used by the loop tests.
enum Creds {
    static let serverUfrag = "srvU"
    static let serverPassword = "serverIcePassword0123456789"
    static let clientUfrag = "cliU"

    static func check(useCandidate: Bool, transaction: UInt64) throws -> [UInt8] {
        var builder = STUNMessageBuilder(type: .bindingRequest, transactionID: STUNTransactionID(high: 0x5151, low: transaction))
        try builder.appendUsername("\(serverUfrag):\(clientUfrag)")
        try builder.appendPriority(0x6E7F_00FF)
        try builder.appendICEControlling(tieBreaker: 77)
        if useCandidate { try builder.appendUseCandidate() }
        return try builder.build(integrityKey: Array(serverPassword.utf8), fingerprint: true)
    }
}
