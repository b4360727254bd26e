import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where log lines go. Thread-safe: one lock serializes writes so concurrent lines never
/// interleave, and each line goes out in as few `write(2)` calls as the kernel allows.
public final class LogSink: @unchecked Sendable {
    private enum Target {
        case fileDescriptor(Int32)
        case collector
    }

    private let target: Target
    private let lock = NSLock()
    private var collected: [String] = []

    /// Standard error: what systemd-journald and `docker logs` capture.
    public static let stderr = LogSink(fileDescriptor: 2)
    public static let stdout = LogSink(fileDescriptor: 1)

    /// Writes to an open file descriptor; the sink does not own or close it.
    public init(fileDescriptor: Int32) {
        target = .fileDescriptor(fileDescriptor)
    }

    private init(collecting: Void) {
        target = .collector
    }

    /// A sink that keeps lines in memory, for tests.
    public static func collecting() -> LogSink { LogSink(collecting: ()) }

    /// Lines a collecting sink received, in order (without trailing newlines). Empty for
    /// file-descriptor sinks.
    public var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return collected
    }

    /// Writes one line; a newline is appended.
    public func write(line: String) {
        lock.lock()
        defer { lock.unlock() }
        switch target {
        case .collector:
            collected.append(line)
        case .fileDescriptor(let fd):
            var bytes = Array(line.utf8)
            bytes.append(UInt8(ascii: "\n"))
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { buffer in
                    Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                }
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    return  // Logging must never take the server down; drop the line.
                }
            }
        }
    }
}
