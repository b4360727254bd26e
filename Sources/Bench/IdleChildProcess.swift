import Auth
import Foundation
import IO

/// The parent's handle on one `switchboard bench idle-fleet` child: spawned with
/// posix_spawn(3) with its stdin and stdout on pipes (FD_CLOEXEC, so no sibling inherits
/// another child's pipe and every child sees EOF when the parent dies), its stderr shared
/// with the parent. A reader thread keeps the child's latest ``IdleChildMessage``.
final class IdleChildProcess: @unchecked Sendable {
    let index: Int
    let count: Int
    let offset: Int
    private(set) var pid: pid_t = 0
    private var stdinWrite: Int32 = -1
    private let lock = NSLock()
    private var latest: IdleChildMessage?
    private var protocolError: IdleChildProtocolError?
    private var outputClosed = false
    private var reaped = false

    init(index: Int, count: Int, offset: Int) {
        self.index = index
        self.count = count
        self.offset = offset
    }

    /// What the parent knows of the child right now.
    struct Status {
        var latest: IdleChildMessage?
        var protocolError: IdleChildProtocolError?
        /// The child's stdout closed: it exited (or closed it), no more progress will come.
        var outputClosed: Bool
    }

    var status: Status {
        lock.lock(); defer { lock.unlock() }
        return Status(latest: latest, protocolError: protocolError, outputClosed: outputClosed)
    }

    /// The path of the running executable (/proc/self/exe), for children of the same binary.
    static func ownExecutable() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0 ..< n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Starts `executable bench idle-fleet …` and writes the secret as stdin's first line.
    func spawn(executable: String, url: String, connectRate: Int, maxInFlight: Int, client: PairClient = .lean,
               secret: [UInt8]) throws(IdleChildSpawnError) {
        var input: [Int32] = [-1, -1]
        var output: [Int32] = [-1, -1]
        guard pipe(&input) == 0 else { throw .pipe(errno: errno) }
        guard pipe(&output) == 0 else {
            close(input[0]); close(input[1])
            throw .pipe(errno: errno)
        }
        // FD_CLOEXEC right away (Glibc does not export pipe2 to Swift): only this thread
        // spawns, so no other child can inherit these ends in between.
        for fd in input + output { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let arguments = [executable, "bench", "idle-fleet", "--url", url, "--count", "\(count)", "--offset", "\(offset)",
                         "--connect-rate", "\(connectRate)", "--in-flight", "\(maxInFlight)", "--client", client.rawValue]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears O_CLOEXEC on the target only: the child keeps fds 0, 1 (and 2).
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, nil, argv, environ)
        close(input[0])
        close(output[1])
        guard rc == 0 else {
            close(input[1]); close(output[0])
            throw .spawn(errno: rc)
        }
        pid = child
        stdinWrite = input[1]
        // A child that died before reading its secret must not kill the benchmark with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let line = Array((Base64URL.encode(secret) + "\n").utf8)
        _ = line.withUnsafeBytes { write(stdinWrite, $0.baseAddress, $0.count) }
        let readEnd = output[0]
        Thread.detachNewThread { [self] in readLines(from: readEnd) }
    }

    private func readLines(from fd: Int32) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            buffer += chunk[0 ..< n]
            while let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                do throws(IdleChildProtocolError) {
                    let message = try IdleChildMessage.parse(line, count: count)
                    lock.lock(); latest = message; lock.unlock()
                } catch {
                    lock.lock(); if protocolError == nil { protocolError = error }; lock.unlock()
                }
            }
        }
        close(fd)
        lock.lock(); outputClosed = true; lock.unlock()
    }

    /// Closes the child's stdin (it closes its devices and exits), then SIGTERM after
    /// `grace` seconds, SIGKILL 1 s later; reaps it. Returns how it ended.
    @discardableResult
    func terminate(grace: Double = 3) -> String {
        guard pid > 0, !reaped else { return "not started" }
        closeInput()
        if let status = waitExit(seconds: grace) { return status }
        kill(pid, SIGTERM)
        if let status = waitExit(seconds: 1) { return "SIGTERM after \(grace) s: \(status)" }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        reaped = true
        return "SIGKILL"
    }

    /// EOF on the child's stdin: it closes its devices and exits.
    func closeInput() {
        if stdinWrite >= 0 { close(stdinWrite); stdinWrite = -1 }
    }

    /// Polls waitpid(WNOHANG) every 20 ms for up to `seconds`.
    private func waitExit(seconds: Double) -> String? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        repeat {
            var status: Int32 = 0
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid || (r < 0 && errno == ECHILD) {
                reaped = true
                return (status & 0x7f) == 0 ? "exit \((status >> 8) & 0xff)" : "signal \(status & 0x7f)"
            }
            Thread.sleep(forTimeInterval: 0.02)
        } while Date() < deadline
        return nil
    }

    deinit { terminate(grace: 1) }
}

/// Why a child could not be started.
enum IdleChildSpawnError: Error, Equatable {
    case pipe(errno: Int32)
    case spawn(errno: Int32)
}
