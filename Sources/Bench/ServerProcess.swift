import Foundation

/// The server process seen through /proc (Linux proc(5)): its resident memory and CPU time.
enum ServerProcess {
    /// VmRSS of `pid` in KiB, from /proc/<pid>/status.
    static func residentKB(pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
        }
        return nil
    }

    /// utime + stime of `pid` in clock ticks (fields 14 and 15 of /proc/<pid>/stat).
    static func cpuTicks(pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // Fields after "(comm)" start at field 3 (state).
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    /// Time the process's main thread (the server's event loop) spent waiting for a CPU
    /// while runnable, in ns: field 2 of /proc/<pid>/schedstat (Documentation/scheduler/sched-stats.rst).
    /// High values mean the figures measure CPU contention on the host, not the server.
    static func runQueueWaitNanos(pid: Int32) -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/schedstat", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        return fields.count >= 2 ? Int64(fields[1]) : nil
    }

    /// The 1-minute load average (/proc/loadavg).
    static func loadAverage() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return nil }
        return text.split(separator: " ").first.flatMap { Double($0) }
    }

    /// This process's CPU seconds (user + system), from getrusage(2).
    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    static var ticksPerSecond: Double { Double(sysconf(Int32(_SC_CLK_TCK))) }

    /// The process holding a listening TCP socket on `port`: the socket's inode from
    /// /proc/net/tcp{,6} (state 0A = LISTEN), then the /proc/<pid>/fd link "socket:[inode]".
    /// nil when not found or not permitted.
    static func listener(port: Int) -> Int32? {
        var inodes: Set<String> = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let f = line.split(separator: " ", omittingEmptySubsequences: true)
                guard f.count > 9, f[3] == "0A", let colon = f[1].lastIndex(of: ":"),
                      Int(f[1][f[1].index(after: colon)...], radix: 16) == port else { continue }
                inodes.insert(String(f[9]))
            }
        }
        guard !inodes.isEmpty, let pids = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        let me = getpid()
        for entry in pids {
            guard let pid = Int32(entry), pid != me,
                  let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(entry)/fd") else { continue }
            for fd in fds {
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(entry)/fd/\(fd)"),
                      target.hasPrefix("socket:[") else { continue }
                if inodes.contains(String(target.dropFirst(8).dropLast())) { return pid }
            }
        }
        return nil
    }

    /// The port of a ws:// or wss:// URL (default 80/443).
    static func port(of url: String) -> Int? {
        guard let components = URLComponents(string: url) else { return nil }
        if let port = components.port { return port }
        return components.scheme == "wss" ? 443 : 80
    }
}
