import Foundation
import XCTest

/// The real `switchboard serve` binary on a loopback port the kernel picks, with a temp data
/// directory and a fixed token secret (as Tests/IntegrationTests/Support/ServerProcess.swift).
final class BenchServer: @unchecked Sendable {
    /// 33 bytes of 9: base64 "CQkJ…" without padding, so base64 and base64url text agree.
    static let secret: [UInt8] = Array(repeating: 9, count: 33)
    static var secretText: String { Data(secret).base64EncodedString() }
    let directory: URL
    let process = Process()
    private(set) var port = 0
    private let lock = NSLock()
    private var buffer = Data()

    /// The `switchboard` executable in the build products directory, next to the test bundle.
    static var binary: URL {
        var dir = Bundle(for: BenchServer.self).bundleURL
        for _ in 0 ..< 3 {
            let candidate = dir.appendingPathComponent("switchboard")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return dir.appendingPathComponent("switchboard")
    }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchboard-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SWITCHBOARD_") }
        env["SWITCHBOARD_HTTP_HOST"] = "127.0.0.1"
        env["SWITCHBOARD_HTTP_PORT"] = "0"
        env["SWITCHBOARD_MEDIA_HOST"] = "127.0.0.1"
        env["SWITCHBOARD_MEDIA_PORT"] = "0"
        env["SWITCHBOARD_DATABASE_PATH"] = directory.appendingPathComponent("switchboard.sqlite").path
        env["SWITCHBOARD_TOKEN_SECRET"] = Self.secretText
        env["SWITCHBOARD_LOG_LEVEL"] = "info"
        process.executableURL = Self.binary
        process.arguments = ["serve"]
        process.environment = env
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        let pipe = Pipe()
        process.standardError = pipe
        let announced = DispatchSemaphore(value: 0)
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let chunk = handle.availableData
            guard let self else { return }
            if chunk.isEmpty { handle.readabilityHandler = nil; return }
            lock.lock(); defer { lock.unlock() }
            guard port == 0 else { return }
            buffer.append(chunk)
            while let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[buffer.startIndex ..< newline]
                buffer.removeSubrange(buffer.startIndex ... newline)
                guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any],
                      object["msg"] as? String == "listening",
                      let fields = object["fields"] as? [String: Any], let bound = fields["port"] as? Int else { continue }
                port = bound
                announced.signal()
            }
        }
        try process.run()
        if announced.wait(timeout: .now() + 30) == .timedOut {
            stop()
            throw XCTSkip("the server did not announce its port within 30 s")
        }
    }

    var url: String { "ws://127.0.0.1:\(port)/v1/ws" }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date(timeIntervalSinceNow: 10)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Live `bench idle-fleet` processes (zombies excluded unless `zombies`): those whose parent
/// is `parent` (nil = any) and whose command line has `word` (nil = any), from
/// /proc/<pid>/stat (fields 3 state, 4 ppid) and /proc/<pid>/cmdline.
func idleFleetProcesses(parent: Int32? = getpid(), containing word: String? = nil, zombies: Bool = true) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry -> Int32? in
        guard let pid = Int32(entry),
              let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 1, parent.map({ Int32(fields[1]) == $0 }) ?? true, zombies || fields[0] != "Z",
              let cmdline = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
        let words = cmdline.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        guard words.contains("idle-fleet") else { return nil }
        return word.map { words.contains($0) } ?? true ? pid : nil
    }
}
