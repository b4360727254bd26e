import CAllocationCounter
import SFU
import XCTest

/// The uplink NACK generator runs once per stream per timer tick; its tick must not allocate
/// (issue 3). In the debug build its `for … in` over the reorder samples allocated 33 times per
/// stream per tick (unspecialized `IndexingIterator.next()`), ~1,150 of the ~1,700 timer
/// allocations in `SFUServerAllocationTests`.
final class NackGeneratorAllocationTests: XCTestCase {
    func testTickWithMissingPacketsAndReorderSamplesAllocatesNothing() throws {
        try XCTSkipUnless(sb_alloc_count_available(), "allocations are not counted under AddressSanitizer")
        var generator = NackGenerator(config: NackGeneratorConfig(maxAge: 1_000_000))
        var out: [UInt16] = []
        out.reserveCapacity(NackGeneratorConfig(maxAge: 1_000_000).maxPerNACK)
        var now: Int64 = 0
        // Every 10th packet lost, every 7th arrives one packet late: gaps to NACK and
        // reordering samples for the wait.
        var sequence: UInt16 = 0
        while sequence < 2_000 {
            now += 3_000
            if sequence % 10 != 5 {
                if sequence % 7 == 3 {
                    _ = generator.received(sequence &+ 1, now: now)
                    _ = generator.received(sequence, now: now + 1_000)
                    sequence &+= 2
                    continue
                }
                _ = generator.received(sequence, now: now)
            }
            sequence &+= 1
        }
        // Warm-up tick (nothing grows after it: `out` and the missing list are reserved).
        generator.tick(now: now, rtt: 40_000, jitter: 2_000, into: &out)
        var nacked = out.count
        sb_alloc_count_enable_this_thread(true)
        let before = sb_alloc_count_read()
        for _ in 0..<50 {
            now += 20_000
            out.removeAll(keepingCapacity: true)
            generator.tick(now: now, rtt: 40_000, jitter: 2_000, into: &out)
            nacked += out.count
        }
        let allocations = sb_alloc_count_read() - before
        sb_alloc_count_enable_this_thread(false)
        XCTAssertGreaterThan(nacked, 0, "the ticks had packets to NACK")
        XCTAssertGreaterThan(generator.reorderWait(now: now - 500_000, jitter: nil), 0)
        XCTAssertEqual(allocations, 0, "allocations in 50 NackGenerator ticks")
    }
}
