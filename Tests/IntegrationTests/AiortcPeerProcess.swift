import Foundation
import XCTest

/// The aiortc room member (`aiortc/room_peer.py`, PyPI aiortc 1.16.0) as a child process:
/// its stdout JSON lines are parsed into events, its stderr is kept for failure messages.
/// Bounded: the script stops itself after `timeout` seconds, and `stop()` (also run by
/// deinit) closes its stdin, then SIGTERM, then SIGKILL.
final class AiortcPeerProcess: @unchecked Sendable {
    static var script: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("aiortc/room_peer.py")
    }

    /// nil when python3 can import aiortc 1.16.0, websockets and numpy; else why not.
    static func unavailableReason() -> String? {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import aiortc, websockets, numpy; assert aiortc.__version__ == '1.16.0', aiortc.__version__"]
        let err = Pipe()
        probe.standardError = err
        probe.standardOutput = FileHandle.nullDevice
        do { try probe.run() } catch { return "python3: \(error)" }
        probe.waitUntilExit()
        guard probe.terminationStatus == 0 else {
            let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            return "aiortc is not installed (run scripts/install-deps.sh): \(text.suffix(400))"
        }
        return nil
    }

    private let process = Process()
    private let stdin = Pipe()
    private let lock = NSCondition()
    private var events: [[String: Any]] = []
    private var stderrText = ""

    /// Starts the script; `token` travels in the environment (never on the command line).
    init(url: String, token: String, room: String, frequency: Double, expect: [String], minSeconds: Double = 2,
         timeout: TimeInterval = 45) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var arguments = ["python3", "-u", Self.script.path, "--url", url, "--room", room, "--frequency", String(frequency),
                         "--min-seconds", String(minSeconds), "--timeout", String(timeout)]
        for key in expect { arguments += ["--expect", key] }
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["SWITCHBOARD_TOKEN"] = token
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardInput = stdin
        process.standardOutput = out
        process.standardError = err
        let lines = LineReader()
        out.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let chunk = handle.availableData
            if chunk.isEmpty { handle.readabilityHandler = nil; return }
            guard let self else { return }
            for line in lines.feed(chunk) {
                guard let data = line.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                    self.appendStderr("stdout: " + line + "\n")
                    continue
                }
                self.lock.lock(); self.events.append(object); self.lock.broadcast(); self.lock.unlock()
            }
        }
        err.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let chunk = handle.availableData
            if chunk.isEmpty { handle.readabilityHandler = nil; return }
            self?.appendStderr(String(decoding: chunk, as: UTF8.self))
        }
        try process.run()
    }

    private func appendStderr(_ text: String) {
        lock.lock(); stderrText += text; lock.unlock()
    }

    /// The script's stderr so far (its last 4000 characters), for failure messages.
    var stderr: String {
        lock.lock(); defer { lock.unlock() }
        return String(stderrText.suffix(4000))
    }

    var isRunning: Bool { process.isRunning }

    /// Waits for the first event matching `predicate` (events stay recorded); nil on timeout
    /// or when the process exits first.
    func waitForEvent(timeout: TimeInterval, _ predicate: ([String: Any]) -> Bool) -> [String: Any]? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        lock.lock()
        defer { lock.unlock() }
        while true {
            if let event = events.first(where: predicate) { return event }
            if !process.isRunning || Date() > deadline { return nil }
            // Wake up now and then to notice the process exiting (no event signals that).
            _ = lock.wait(until: min(deadline, Date(timeIntervalSinceNow: 0.2)))
        }
    }

    func waitForEvent(_ name: String, timeout: TimeInterval) -> [String: Any]? {
        waitForEvent(timeout: timeout) { $0["event"] as? String == name }
    }

    /// Closes stdin (the script leaves the room and prints its final summary), waits up to
    /// `grace` seconds, then SIGTERM, then SIGKILL. Returns the exit status.
    @discardableResult
    func stop(grace: TimeInterval = 10) -> Int32 {
        try? stdin.fileHandleForWriting.close()
        guard process.processIdentifier > 0 else { return -1 }
        let deadline = Date(timeIntervalSinceNow: grace)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning {
            process.terminate()
            let killAt = Date(timeIntervalSinceNow: 3)
            while process.isRunning, Date() < killAt { Thread.sleep(forTimeInterval: 0.05) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit { stop(grace: 0) }
}
