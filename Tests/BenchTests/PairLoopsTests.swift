@testable import Bench
import Foundation
import IO
import XCTest

/// ``PairLoops``: how pairs are spread over loops, and that the per-loop metrics merge into
/// the figures one loop would have collected.
final class PairLoopsTests: XCTestCase {
    func testLoopCount() {
        XCTAssertEqual(PairLoops.loopCount(pairs: 200, pairsPerLoop: 4), 50)
        XCTAssertEqual(PairLoops.loopCount(pairs: 201, pairsPerLoop: 4), 51)
        XCTAssertEqual(PairLoops.loopCount(pairs: 3, pairsPerLoop: 4), 1)
        XCTAssertEqual(PairLoops.loopCount(pairs: 0, pairsPerLoop: 4), 1, "one loop even without pairs")
        XCTAssertEqual(PairLoops.loopCount(pairs: 7, pairsPerLoop: 1), 7)
    }

    func testEveryPairOnExactlyOneLoopAndLoopsBalanced() {
        for (pairs, perLoop) in [(200, 4), (201, 4), (7, 3), (1, 1), (10, 25)] {
            let loops = PairLoops.loopCount(pairs: pairs, pairsPerLoop: perLoop)
            let split = (0 ..< loops).map { PairLoops.pairIndices(loop: $0, loops: loops, pairs: pairs) }
            XCTAssertEqual(split.flatMap { $0 }.sorted(), Array(0 ..< pairs), "\(pairs) pairs, \(perLoop) per loop")
            let sizes = split.map(\.count)
            XCTAssertLessThanOrEqual((sizes.max() ?? 0) - (sizes.min() ?? 0), 1)
            XCTAssertLessThanOrEqual(sizes.max() ?? 0, perLoop)
        }
    }

    func testOnEachRunsOnEveryLoopsOwnThread() {
        let loops = PairLoops(count: 3)
        loops.start()
        defer { loops.stop() }
        let owners = loops.onEach { k in loops.loops.enumerated().map { $0.element.isOnLoopThread ? $0.offset : -1 }.filter { $0 >= 0 } == [k] }
        XCTAssertEqual(owners, [true, true, true], "body k runs on loop k's thread and no other loop's")
        XCTAssertEqual(loops.loops.map(\.name), ["bench-pairs-0", "bench-pairs-1", "bench-pairs-2"])
    }

    func testMergedMetricsAddUpAcrossLoops() {
        let loops = PairLoops(count: 2)
        loops.start()
        defer { loops.stop() }
        let before = loops.measuring(true)
        XCTAssertEqual(before.setupsCompleted, 0)
        _ = loops.onEach { k in
            let m = loops.metrics[k]
            m.setupsCompleted += k + 1
            m.commandsSent += 10
            m.accepted += 5
            m.rejectedByCode["notAllowed", default: 0] += 1
            m.rejectionExamples["notAllowed"] = "loop \(k)"
            m.error("setupTimeout(ended)")
            m.record(.setup, Int64(1_000 * (k + 1)))
            m.record(.setup, Int64(3_000 * (k + 1)))
        }
        let after = loops.measuring(false)
        XCTAssertEqual((after - before).setupsCompleted, 3)
        XCTAssertEqual(after.commandsSent, 20)
        let merged = loops.merged()
        XCTAssertEqual(merged.setupsCompleted, 3)
        XCTAssertEqual(merged.accepted, 10)
        XCTAssertEqual(merged.rejectedByCode, ["notAllowed": 2])
        XCTAssertEqual(merged.rejectionExamples, ["notAllowed": "loop 0"], "the first loop's example is kept")
        XCTAssertEqual(merged.errors, ["setupTimeout(ended)": 2])
        let setup = merged.latencies[.setup]
        XCTAssertEqual(setup?.count, 4)
        XCTAssertEqual(setup?.samples.sorted(), [1_000, 2_000, 3_000, 6_000])
        XCTAssertEqual(setup?.summary().max, 6)
    }

    func testRecorderAbsorbKeepsCountsOfBoth() {
        var a = LatencyRecorder()
        var b = LatencyRecorder()
        for v in [5, 1, 9] { a.record(Int64(v)) }
        for v in [7, 3] { b.record(Int64(v)) }
        a.absorb(b)
        XCTAssertEqual(a.count, 5)
        XCTAssertEqual(a.samples.sorted(), [1, 3, 5, 7, 9])
        XCTAssertEqual(a.summary().p50, 0.005, "nearest rank over the merged samples")
    }

    func testPairsPerLoopFlag() throws {
        guard case .run(let o) = try BenchmarkOptions.parse(["--secret", "c2VjcmV0", "--pairs-per-loop", "2"]) else {
            return XCTFail("expected run")
        }
        XCTAssertEqual(o.pairsPerLoop, 2)
        guard case .run(let d) = try BenchmarkOptions.parse(["--secret", "c2VjcmV0"]) else { return XCTFail("expected run") }
        XCTAssertNil(d.pairsPerLoop)
        XCTAssertEqual(d.effectivePairsPerLoop, 256, "lean client: 256 per loop, the default 200 pairs on one loop")
        guard case .run(let s) = try BenchmarkOptions.parse(["--secret", "c2VjcmV0", "--client", "soup"]) else { return XCTFail("expected run") }
        XCTAssertEqual(s.effectivePairsPerLoop, 4, "libsoup's client scans its loop's sockets: 4 per loop")
        XCTAssertEqual(o.effectivePairsPerLoop, 2, "the flag wins")
        XCTAssertThrowsError(try BenchmarkOptions.parse(["--secret", "c2VjcmV0", "--pairs-per-loop", "0"]))
    }
}
