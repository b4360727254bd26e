import XCTest
@testable import RTP
import SplitMix

final class SequenceNumberTests: XCTestCase {
    static let startingPoints: [UInt16] = {
        var rng = SplitMix64(seed: 7)
        return [0, 1, 32767, 32768, 65534, 65535] + (0..<10).map { _ in UInt16.random(in: 0...UInt16.max, using: &rng) }
    }()

    func testIsNewer() {
        XCTAssertTrue(isNewer(UInt16(1), UInt16(0)))
        XCTAssertFalse(isNewer(UInt16(0), UInt16(1)))
        XCTAssertTrue(isNewer(UInt16(0), UInt16(65535)), "wrap")
        XCTAssertTrue(isNewer(UInt16(100), UInt16(65500)))
        XCTAssertFalse(isNewer(UInt16(65500), UInt16(100)))
        XCTAssertFalse(isNewer(UInt16(5), UInt16(5)))
        // Exactly half the space apart: exactly one direction is newer.
        XCTAssertNotEqual(isNewer(UInt16(0x8000), UInt16(0)), isNewer(UInt16(0), UInt16(0x8000)))
        for start in Self.startingPoints {
            for step: UInt16 in [1, 100, 0x7FFF] {
                XCTAssertTrue(isNewer(start &+ step, start), "\(start)+\(step)")
                XCTAssertFalse(isNewer(start, start &+ step), "\(start)+\(step)")
            }
        }
        XCTAssertTrue(isNewer(UInt32(5), UInt32.max - 5))
    }

    func testUnwrapperAcrossWrapsFromManyStartingPoints() {
        for start in Self.startingPoints {
            var unwrapper = SequenceNumberUnwrapper()
            var expected = Int64(start)
            XCTAssertEqual(unwrapper.unwrap(start), expected)
            // Forward in steps of 1 and with gaps, through at least three wraps.
            var rng = SplitMix64(seed: UInt64(start))
            for _ in 0..<5000 {
                let step = Int64.random(in: 1...100, using: &rng)
                expected += step
                XCTAssertEqual(unwrapper.unwrap(UInt16(truncatingIfNeeded: expected)), expected, "start \(start)")
            }
            XCTAssertGreaterThan(expected - Int64(start), 3 * 65536)
            // A reordered (older) packet maps below the newest one, without moving cycles.
            XCTAssertEqual(unwrapper.peek(UInt16(truncatingIfNeeded: expected - 3)), expected - 3)
            XCTAssertEqual(unwrapper.unwrap(UInt16(truncatingIfNeeded: expected - 3)), expected - 3)
            XCTAssertEqual(unwrapper.unwrap(UInt16(truncatingIfNeeded: expected + 1)), expected + 1)
        }
    }

    func testSequenceRewriterKeepsOutputContinuousAcrossSourceSwitches() {
        for outputStart in Self.startingPoints {
            for sourceStart in Self.startingPoints {
                var rewriter = SequenceRewriter(firstOutput: outputStart)
                var expectedOutput = outputStart
                // Source A: 40 packets, continuous.
                for index in 0..<40 {
                    XCTAssertEqual(rewriter.rewrite(sourceStart &+ UInt16(index), source: 0xA), expectedOutput)
                    expectedOutput &+= 1
                }
                // Switch to B whose numbers are unrelated: output continues at +1.
                let bStart = sourceStart &+ 30_000
                for index in 0..<40 {
                    XCTAssertEqual(rewriter.rewrite(bStart &+ UInt16(index), source: 0xB), expectedOutput, "out \(outputStart) src \(sourceStart)")
                    expectedOutput &+= 1
                }
                // A loss on B (skip 3) stays visible as a gap.
                XCTAssertEqual(rewriter.rewrite(bStart &+ 43, source: 0xB), expectedOutput &+ 3)
                // Reordered B packet within the stream still maps.
                XCTAssertEqual(rewriter.rewrite(bStart &+ 41, source: 0xB), expectedOutput &+ 1)
                XCTAssertEqual(rewriter.lastOutput, expectedOutput &+ 3)
            }
        }
    }

    func testSequenceRewriterDropsLatePacketsFromBeforeSwitch() {
        var rewriter = SequenceRewriter(firstOutput: 65530)
        for seq: UInt16 in 100..<110 { _ = rewriter.rewrite(seq, source: 1) }  // outputs 65530…65535, 0…3
        XCTAssertEqual(rewriter.lastOutput, 3)
        XCTAssertEqual(rewriter.rewrite(5000, source: 2), 4)
        // B's packet 4999 arrives late: it would map to 3, which the subscriber already has.
        XCTAssertNil(rewriter.rewrite(4999, source: 2))
        XCTAssertEqual(rewriter.rewrite(5001, source: 2), 5)
        // Back to A: continues after 5.
        XCTAssertEqual(rewriter.rewrite(110, source: 1), 6)
    }

    func testSequenceRewriterKeepsForwardingLongAfterASwitch() {
        for start in Self.startingPoints {
            var rewriter = SequenceRewriter(firstOutput: start)
            _ = rewriter.rewrite(10, source: 1)
            var expected = start &+ 1
            for index in 0..<200_000 {
                XCTAssertEqual(rewriter.rewrite(UInt16(truncatingIfNeeded: 5000 + index), source: 2), expected, "start \(start) index \(index)")
                if rewriter.lastOutput != expected { break }
                expected &+= 1
            }
        }
    }

    func testSequenceRewriterWithoutFirstOutputPassesThrough() {
        var rewriter = SequenceRewriter()
        XCTAssertEqual(rewriter.rewrite(65535, source: 9), 65535)
        XCTAssertEqual(rewriter.rewrite(0, source: 9), 0)
        XCTAssertEqual(rewriter.rewrite(12, source: 10), 1)
    }

    func testTimestampRewriterAcrossSwitchesAndWraps() {
        let starts: [UInt32] = [0, 1, 0x7FFF_FFFF, 0x8000_0000, UInt32.max - 1, UInt32.max, 123_456_789]
        for aStart in starts {
            for bStart in starts {
                var rewriter = TimestampRewriter()
                for index: UInt32 in 0..<10 {
                    XCTAssertEqual(rewriter.rewrite(aStart &+ 960 * index, source: 1), aStart &+ 960 * index)
                }
                let lastA = aStart &+ 960 * 9
                // Switch to B after a 100 ms gap (4800 at 48 kHz).
                XCTAssertEqual(rewriter.rewrite(bStart, source: 2, switchGap: 4800), lastA &+ 4800)
                XCTAssertEqual(rewriter.rewrite(bStart &+ 960, source: 2, switchGap: 4800), lastA &+ 5760)
                XCTAssertEqual(rewriter.lastOutput, lastA &+ 5760)
            }
        }
    }
}
