import Foundation
#if canImport(Glibc)
import Glibc
#endif
import XCTest
@testable import NetEmu

/// A datagram a test endpoint received.
struct Received {
    let bytes: [UInt8]
    let fromPort: UInt16
    /// CLOCK_MONOTONIC ns at receipt.
    let at: UInt64
    /// Test payloads start with a 4-byte sequence number and an 8-byte send time.
    var sequence: UInt32 { bytes.count >= 4 ? bytes[0..<4].reduce(0) { $0 << 8 | UInt32($1) } : .max }
    var sentAt: UInt64 { bytes.count >= 12 ? bytes[4..<12].reduce(0) { $0 << 8 | UInt64($1) } : 0 }
    var oneWayMs: Double { Double(Int64(bitPattern: at &- sentAt)) / 1e6 }
}

/// A test payload: sequence number, send time, then a pattern so corruption would show.
func payload(_ sequence: UInt32, size: Int = 100) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: max(size, 12))
    let now = monotonicNanoseconds()
    for i in 0..<4 { bytes[i] = UInt8(truncatingIfNeeded: sequence >> (24 - 8 * UInt32(i))) }
    for i in 0..<8 { bytes[4 + i] = UInt8(truncatingIfNeeded: now >> (56 - 8 * UInt64(i))) }
    for i in 12..<bytes.count { bytes[i] = UInt8(truncatingIfNeeded: Int(sequence) &* 31 &+ i) }
    return bytes
}

/// A real UDP socket on 127.0.0.1 (port 0) with a thread that collects everything it receives.
/// Optionally echoes every datagram back to its sender (a stand-in server).
final class TestEndpoint: @unchecked Sendable {
    let fd: Int32
    let port: UInt16
    private let lock = NSLock()
    private var items: [Received] = []
    private var running = true
    private let done = DispatchSemaphore(value: 0)
    private let echo: Bool

    init(echo: Bool = false) throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        self.fd = fd
        var addr = try UDPSocket.address("127.0.0.1", 0)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, rc == 0 else { throw NetEmuError.socket("bind", errno) }
        var size: Int32 = 4 << 20
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var tv = timeval(tv_sec: 0, tv_usec: 20_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        port = UDPSocket.localPort(fd)
        self.echo = echo
        let thread = Thread { [self] in self.collect() }
        thread.start()
    }

    private func collect() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            lock.lock()
            let go = running
            lock.unlock()
            guard go else { break }
            var from = sockaddr_in()
            var len = socklen_t(MemoryLayout<sockaddr_in>.size)
            let n = withUnsafeMutablePointer(to: &from) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, &buffer, buffer.count, 0, $0, &len) }
            }
            guard n >= 0 else { continue }
            let at = monotonicNanoseconds()
            let bytes = Array(buffer[0..<n])
            if echo { _ = UDPSocket.send(fd, bytes, to: from) }
            lock.lock()
            items.append(Received(bytes: bytes, fromPort: UInt16(bigEndian: from.sin_port), at: at))
            lock.unlock()
        }
        done.signal()
    }

    func send(_ bytes: [UInt8], toPort port: UInt16) {
        guard let addr = try? UDPSocket.address("127.0.0.1", port) else { return }
        _ = UDPSocket.send(fd, bytes, to: addr)
    }

    var received: [Received] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return items.count
    }

    func close() {
        lock.lock()
        running = false
        lock.unlock()
        done.wait()
        _ = Glibc.close(fd)
    }
}

/// Polls `condition` every millisecond until it holds or `timeout` seconds pass.
@discardableResult
func waitUntil(_ timeout: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicNanoseconds() + UInt64(timeout * 1e9)
    while monotonicNanoseconds() < deadline {
        if condition() { return true }
        usleep(1000)
    }
    return condition()
}

/// Sends `count` numbered datagrams from `from` to `port` in batches, waiting after each batch
/// until `caughtUp(sent)` says the far side has taken them in (so no socket buffer overflows
/// and any loss is the relay's).
func pump(_ count: Int, from: TestEndpoint, toPort port: UInt16, size: Int = 100, batch: Int = 250, caughtUp: (Int) -> Bool) {
    var sent = 0
    while sent < count {
        let n = min(batch, count - sent)
        for i in 0..<n { from.send(payload(UInt32(sent + i), size: size), toPort: port) }
        sent += n
        waitUntil(5) { caughtUp(sent) }
    }
}

/// Sends numbered datagrams at a fixed interval (absolute schedule, so sleeps do not drift).
func pace(_ count: Int, intervalMs: Double, from: TestEndpoint, toPort port: UInt16, size: Int) {
    let start = monotonicNanoseconds()
    for i in 0..<count {
        let due = start + UInt64(Double(i) * intervalMs * 1e6)
        let now = monotonicNanoseconds()
        if due > now { usleep(UInt32((due - now) / 1000)) }
        from.send(payload(UInt32(i), size: size), toPort: port)
    }
}

/// Lengths of runs of consecutive `true` values.
func runLengths(_ flags: [Bool]) -> [Int] {
    var runs: [Int] = []
    var current = 0
    for f in flags {
        if f { current += 1 } else if current > 0 { runs.append(current); current = 0 }
    }
    if current > 0 { runs.append(current) }
    return runs
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}
