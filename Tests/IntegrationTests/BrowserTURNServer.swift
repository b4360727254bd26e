import Foundation
import XCTest

/// Debian coturn (`turnserver`) on 127.0.0.1 with the TURN REST shared secret
/// (`use-auth-secret`), for relay-only browser calls. Killed and cleaned up by `stop()`.
final class BrowserTURNServer: @unchecked Sendable {
    static let executable = "/usr/bin/turnserver"
    private(set) var port: UInt16 = 0
    let secret: String
    let directory: URL
    /// The UDP ports coturn allocates relayed transport addresses from.
    private(set) var relayPorts: ClosedRange<Int> = 0 ... 0
    private var process = Process()
    private let lock = NSLock()
    private var text = ""

    /// What coturn logs when its listener's port is taken.
    static let portTaken = "Address already in use"

    var uri: String { "turn:127.0.0.1:\(port)?transport=udp" }

    init() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            // In CI a missing browser/TURN server is a broken install step, not a reason to skip.
            if ProcessInfo.processInfo.environment["CI"] != nil { throw XCTSkip.ciMissing("coturn is not installed (apt-get install coturn, or run scripts/install-deps.sh)") }
            throw XCTSkip("coturn is not installed (apt-get install coturn, or run scripts/install-deps.sh)")
        }
        secret = UUID().uuidString
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sb-coturn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // The listening port is free when picked, not when coturn binds it: another process
        // may take it in between (seen in a full run: coturn retried its bind forever, and the
        // call found no relay). A start whose listener could not bind goes again on a new port.
        for attempt in 1 ... 3 {
            try start(port: try Self.freeUDPPort())
            guard log.contains(Self.portTaken) else { return }
            stop(removingDirectory: false)
            if attempt == 3 {
                try? FileManager.default.removeItem(at: directory)
                throw ChromiumError.startFailed("turnserver could not bind a listening port 3 times: \(log.suffix(2000))")
            }
        }
    }

    /// Starts coturn listening on UDP `port` only (`--no-tcp`: the tests use
    /// `transport=udp`) and waits until it is up.
    private func start(port: UInt16) throws {
        self.port = port
        lock.lock(); text = ""; lock.unlock()
        // 200 relay ports from a range derived from the listening port: two tests on one machine
        // rarely collide, and a call needs only a few allocations.
        relayPorts = (40_000 + Int(port % 100) * 200) ... (40_000 + Int(port % 100) * 200 + 199)
        let minPort = relayPorts.lowerBound
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.executable)
        p.arguments = [
            "-n", "--listening-ip=127.0.0.1", "--listening-port=\(port)", "--relay-ip=127.0.0.1",
            "--min-port=\(minPort)", "--max-port=\(minPort + 199)",
            "--use-auth-secret", "--static-auth-secret=\(secret)", "--realm=switchboard",
            "--no-tcp", "--no-tls", "--no-dtls", "--no-cli", "--allow-loopback-peers", "--no-tcp-relay",
            "--db=\(directory.appendingPathComponent("turndb").path)",
            "--pidfile=\(directory.appendingPathComponent("pid").path)",
            "--log-file=stdout", "--simple-log",
        ]
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        process = p
        let ready = DispatchSemaphore(value: 0)
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let chunk = handle.availableData
            if chunk.isEmpty { handle.readabilityHandler = nil; return }
            guard let self else { return }
            // Up, or a listener that cannot bind (coturn then retries that bind forever).
            func settled(_ text: String) -> Bool { text.contains("Total General servers") || text.contains(Self.portTaken) }
            self.lock.lock()
            let wasSettled = settled(self.text)
            self.text += String(decoding: chunk, as: UTF8.self)
            let nowSettled = settled(self.text)
            self.lock.unlock()
            if nowSettled && !wasSettled { ready.signal() }
        }
        try p.run()
        // 10 s: coturn starts in well under a second here.
        if ready.wait(timeout: .now() + 10) == .timedOut {
            stop()
            throw ChromiumError.startFailed("turnserver did not come up: \(log.suffix(2000))")
        }
    }

    var log: String { lock.lock(); defer { lock.unlock() }; return text }

    func stop() { stop(removingDirectory: true) }

    private func stop(removingDirectory: Bool) {
        if process.isRunning {
            process.terminate()
            let deadline = Date(timeIntervalSinceNow: 5)
            while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        if removingDirectory { try? FileManager.default.removeItem(at: directory) }
    }

    deinit { stop() }

    /// Binds UDP port 0 on 127.0.0.1, reads the port the kernel chose, and releases it.
    static func freeUDPPort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw ChromiumError.startFailed("socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                guard bind(fd, pointer, length) == 0 else { return -1 }
                return getsockname(fd, pointer, &length)
            }
        }
        guard bound == 0 else { throw ChromiumError.startFailed("bind: \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }
}
