import Foundation

/// The whole host's CPU time from the first line of /proc/stat (proc(5)): every process and
/// the kernel's own work (interrupts, softirqs: loopback TCP delivery runs there), in clock
/// ticks summed over the CPUs. The benchmark reads it around its window so that the report
/// says how busy the host was: server and benchmark share its cores, and near full the
/// latencies measure the host, not the server (docs/benchmarks.md, "Where the targets stand").
struct HostCPU: Equatable, Sendable {
    /// user + nice + system + irq + softirq + steal (`guest` is inside `user` already; idle
    /// and iowait are not busy).
    var busyTicks: Int64

    /// The `cpu` line: `cpu  user nice system idle iowait irq softirq steal guest guest_nice`.
    /// nil if the text has no such line or its first 8 fields are not all numbers.
    static func parse(_ stat: String) -> HostCPU? {
        guard let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { return nil }
        let numbers = line.split(separator: " ").dropFirst().prefix(8).compactMap { Int64($0) }
        guard numbers.count == 8 else { return nil }
        let (user, nice, system, irq, softirq, steal) = (numbers[0], numbers[1], numbers[2], numbers[5], numbers[6], numbers[7])
        return HostCPU(busyTicks: user + nice + system + irq + softirq + steal)
    }

    static func read() -> HostCPU? {
        (try? String(contentsOfFile: "/proc/stat", encoding: .utf8)).flatMap(parse)
    }

    /// Busy cores between two readings `seconds` apart (1.0 = one core busy throughout).
    static func busyCores(from start: HostCPU, to end: HostCPU, seconds: Double, ticksPerSecond: Double) -> Double? {
        guard seconds > 0, ticksPerSecond > 0, end.busyTicks >= start.busyTicks else { return nil }
        return Double(end.busyTicks - start.busyTicks) / ticksPerSecond / seconds
    }
}
