import Foundation
import IO

/// The event loops that drive the call pairs: ``BenchmarkOptions/pairsPerLoop`` pairs per
/// loop, each loop on its own thread with its own ``BenchMetrics`` (merged at the end).
///
/// Why several: every GLib iteration of a client loop costs O(the sockets on its context)
/// (prepare, poll(2) over every fd, check; libsoup 3.2 gives the client no way to move a
/// WebSocket to another context, docs/benchmarks.md). With all 800 pair sockets of 200
/// pairs on one loop, that scan was about half of the benchmark's CPU per setup (perf,
/// docs/benchmarks.md "Benchmark CPU"). A frame wakes only the loop of its pair, which
/// scans only that pair's few sockets. A pair's devices stay on one loop, so its latencies
/// are measured on one thread against the one monotonic clock every loop shares.
final class PairLoops {
    let loops: [EventLoop]
    let metrics: [BenchMetrics]

    /// Loops for `pairs` pairs at `pairsPerLoop` each (at least one loop).
    static func loopCount(pairs: Int, pairsPerLoop: Int) -> Int {
        max(1, (pairs + max(1, pairsPerLoop) - 1) / max(1, pairsPerLoop))
    }

    /// The pairs of loop `k` out of `loops`: round robin, so the loops differ by at most one pair.
    static func pairIndices(loop k: Int, loops: Int, pairs: Int) -> [Int] {
        Array(stride(from: k, to: pairs, by: max(1, loops)))
    }

    init(count: Int) {
        loops = (0 ..< max(1, count)).map { EventLoop(name: "bench-pairs-\($0)") }
        metrics = loops.map { _ in BenchMetrics() }
    }

    func start() { loops.forEach { $0.start() } }

    func stop() { loops.forEach { $0.stop() } }

    /// Runs `body(k)` on every loop `k` at once and waits for all; the values in loop order.
    func onEach<T>(_ body: @escaping (Int) -> T) -> [T] {
        let group = DispatchGroup()
        let lock = NSLock()
        var values = [T?](repeating: nil, count: loops.count)
        for (k, loop) in loops.enumerated() {
            group.enter()
            loop.execute {
                let value = body(k)
                lock.lock()
                values[k] = value
                lock.unlock()
                group.leave()
            }
        }
        group.wait()
        return values.map { $0! }
    }

    /// Polls `condition` on every loop each 50 ms until all are true or `seconds` pass.
    func wait(seconds: Double, until condition: @escaping (Int) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if onEach(condition).allSatisfy({ $0 }) { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return onEach(condition).allSatisfy { $0 }
    }

    /// The counters of every loop, summed.
    var counts: BenchMetrics.Counts {
        onEach { [metrics] k in metrics[k].counts }.reduce(BenchMetrics.Counts(), +)
    }

    /// Starts (true) or stops measuring on every loop; returns the summed counters at that instant.
    func measuring(_ on: Bool) -> BenchMetrics.Counts {
        onEach { [metrics] k -> BenchMetrics.Counts in
            if on { metrics[k].resetSamples() }
            metrics[k].measuring = on
            return metrics[k].counts
        }.reduce(BenchMetrics.Counts(), +)
    }

    /// Every loop's metrics merged into one (each copied on its own loop's thread).
    func merged() -> BenchMetrics {
        let copies = onEach { [metrics] k -> BenchMetrics in
            let copy = BenchMetrics()
            copy.absorb(metrics[k])
            return copy
        }
        let all = BenchMetrics()
        for copy in copies { all.absorb(copy) }
        return all
    }
}
