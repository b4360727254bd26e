import Auth
import Foundation
import IO
import XCTest

/// The real `switchboard serve` binary on a loopback port chosen at run time, with its own
/// data directory. Keeps every stderr line (the JSON logs) for assertions.
final class ServerProcess: @unchecked Sendable {
    static let secret: [UInt8] = Array(repeating: 7, count: 32)
    let dataDirectory: URL
    let environment: [String: String]
    private(set) var process: Process?
    private(set) var port: UInt16 = 0
    private let lock = NSLock()
    private var lines: [String] = []

    /// `settings` are config keys (`call.ring_timeout` → SWITCHBOARD_CALL_RING_TIMEOUT).
    init(settings: [String: String] = [:], dataDirectory: URL? = nil) throws {
        let dir = dataDirectory ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("switchboard-it-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        self.dataDirectory = dir
        environment = Self.environment(settings: settings, dataDirectory: dir)
        try start()
    }

    /// The server's environment: loopback, ports chosen by the kernel, debug logs, the
    /// database in `dataDirectory`, then `settings` on top.
    static func environment(settings: [String: String], dataDirectory dir: URL) -> [String: String] {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SWITCHBOARD_") }
        env["SWITCHBOARD_HTTP_HOST"] = "127.0.0.1"
        env["SWITCHBOARD_HTTP_PORT"] = "0"
        env["SWITCHBOARD_DATABASE_PATH"] = dir.appendingPathComponent("switchboard.sqlite").path
        env["SWITCHBOARD_TOKEN_SECRET"] = Base64URL.encode(Self.secret)
        env["SWITCHBOARD_LOG_LEVEL"] = "debug"
        // The media plane on loopback, on a port the kernel picks (tests run in parallel).
        env["SWITCHBOARD_MEDIA_HOST"] = "127.0.0.1"
        env["SWITCHBOARD_MEDIA_PORT"] = "0"
        for (key, value) in settings {
            env["SWITCHBOARD_" + key.uppercased().replacingOccurrences(of: ".", with: "_")] = value
        }
        return env
    }

    /// Runs a server that is expected NOT to start: waits up to 20 s for it to exit and
    /// returns its exit status and stderr. One still running then is killed (status nil).
    static func failedStart(settings: [String: String]) throws -> (status: Int32?, stderr: String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("switchboard-it-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let p = Process()
        p.executableURL = binary
        p.arguments = ["serve"]
        p.environment = environment(settings: settings, dataDirectory: dir)
        p.currentDirectoryURL = dir
        let errFile = dir.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: errFile.path, contents: nil)
        let errHandle = try FileHandle(forWritingTo: errFile)
        defer { try? errHandle.close() }
        p.standardError = errHandle
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        LiveServers.shared.add(p.processIdentifier, dataDirectory: dir)
        defer { LiveServers.shared.remove(p.processIdentifier) }
        let deadline = Date(timeIntervalSinceNow: 20)
        while p.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        let exited = !p.isRunning
        if !exited { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        let stderr = String(decoding: (try? Data(contentsOf: errFile)) ?? Data(), as: UTF8.self)
        return (exited ? p.terminationStatus : nil, stderr)
    }

    /// The debug build's `switchboard`, or `SWITCHBOARD_TEST_SERVER` when set (benchmarks
    /// that measure another build, e.g. a release binary).
    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["SWITCHBOARD_TEST_SERVER"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        // The executable sits in the build products directory, next to (or around) the test
        // bundle depending on the platform's bundle layout.
        var dir = Bundle(for: ServerProcess.self).bundleURL
        for _ in 0..<3 {
            let candidate = dir.appendingPathComponent("switchboard")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return dir.appendingPathComponent("switchboard")
    }

    /// Starts the binary and waits for its "listening" log line (with the bound port).
    func start() throws {
        let p = Process()
        p.executableURL = Self.binary
        p.arguments = ["serve"]
        p.environment = environment
        p.currentDirectoryURL = dataDirectory
        let errPipe = Pipe()
        p.standardError = errPipe
        p.standardOutput = FileHandle.nullDevice
        let ready = DispatchSemaphore(value: 0)
        let reader = LineReader()
        errPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let chunk = handle.availableData
            guard let self else { return }
            if chunk.isEmpty { handle.readabilityHandler = nil; return }
            for line in reader.feed(chunk) {
                self.lock.lock(); self.lines.append(line); self.lock.unlock()
                if !reader.announced, line.contains("\"msg\":\"listening\""),
                   let data = line.data(using: .utf8),
                   let obj = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                   let fields = obj["fields"] as? [String: Any], let port = fields["port"] as? Int {
                    self.port = UInt16(port)
                    reader.announced = true
                    ready.signal()
                }
            }
        }
        try p.run()
        process = p
        LiveServers.shared.add(p.processIdentifier, dataDirectory: dataDirectory)
        if ready.wait(timeout: .now() + 30) == .timedOut {
            // SIGKILL and reap: a server that never announced may not obey SIGTERM, and its
            // pid must leave `LiveServers` before the kernel can reuse it.
            kill9()
            throw NSError(domain: "ServerProcess", code: 1, userInfo: [NSLocalizedDescriptionKey: "server did not announce its port; log: \(logLines.suffix(20))"])
        }
    }

    var url: String { "ws://127.0.0.1:\(port)/v1/ws" }
    var httpBase: String { "http://127.0.0.1:\(port)" }

    var logLines: [String] {
        lock.lock(); defer { lock.unlock() }
        return lines
    }

    /// SIGKILL: no shutdown code runs (crash test).
    func kill9() {
        guard let p = process else { return }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        LiveServers.shared.remove(p.processIdentifier)
        process = nil
    }

    /// SIGTERM, then SIGKILL if the server has not exited within 10 s (a test never hangs on
    /// a server that ignores its shutdown; `stoppedCleanly` tells which).
    @discardableResult
    func stop() -> Bool {
        guard let p = process else { return true }
        p.terminate()
        let deadline = Date(timeIntervalSinceNow: 10)
        while p.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        let clean = !p.isRunning
        if !clean { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        LiveServers.shared.remove(p.processIdentifier)
        process = nil
        return clean
    }

    func token(_ account: String, _ device: String, ttl: Int64 = 3600, now: Int64 = Int64(Date().timeIntervalSince1970)) -> String {
        let claims = try! TokenClaims(account: account, device: device, issuedAt: now, expiresAt: now + ttl)
        return TokenSigner(secret: Self.secret).mint(claims)
    }

    deinit {
        XCTAssertTrue(stop(), "the server exits on SIGTERM")
        try? FileManager.default.removeItem(at: dataDirectory)
    }
}

/// Splits a byte stream into lines (one reader per process; called from one handler queue).
final class LineReader: @unchecked Sendable {
    private var buffer = Data()
    var announced = false

    func feed(_ chunk: Data) -> [String] {
        buffer.append(chunk)
        var lines: [String] = []
        while let newline = buffer.firstIndex(of: 0x0A) {
            lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
            buffer.removeSubrange(buffer.startIndex...newline)
        }
        return lines
    }
}

/// Servers started by `ServerProcess` and not yet stopped. A `ServerProcess` that is never
/// released (a test that keeps it alive past its end) never runs its `deinit`, and its
/// server outlived the test process as an orphan (seen once in a full run, a server with
/// default settings and no devices; the test was not identified). At the test process's
/// exit the ones left are killed, and each is named on stderr so the leak shows in the log.
final class LiveServers: @unchecked Sendable {
    static let shared = LiveServers()
    private let lock = NSLock()
    private var servers: [pid_t: URL] = [:]
    private var hooked = false

    func add(_ pid: pid_t, dataDirectory: URL) {
        lock.lock(); defer { lock.unlock() }
        servers[pid] = dataDirectory
        guard !hooked else { return }
        hooked = true
        atexit { LiveServers.shared.killAll() }
    }

    func remove(_ pid: pid_t) {
        lock.lock(); servers[pid] = nil; lock.unlock()
    }

    /// SIGKILL to every server left, then their data directories go.
    func killAll() {
        lock.lock()
        let left = servers
        servers.removeAll()
        lock.unlock()
        for (pid, directory) in left {
            FileHandle.standardError.write(Data("ServerProcess: server pid \(pid) (\(directory.lastPathComponent)) was still running at exit; killed\n".utf8))
            // No waitpid: Foundation's Process reaps its children itself; init reaps these
            // once this process is gone.
            kill(pid, SIGKILL)
            try? FileManager.default.removeItem(at: directory)
        }
    }
}
