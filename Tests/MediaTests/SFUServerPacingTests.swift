import CAllocationCounter
import DTLS
import Foundation
import Glibc
@testable import Media
import RTP
@testable import SFU
import SRTP
import XCTest

/// The pacer on the real send path (docs/rtcp.md, "Pacing"): a room over loopback (UDP, ICE,
/// DTLS, SRTP GCM) whose subscribers are paced at 2.5 × 400 kbit/s, fed 15-packet video
/// bursts (≈ 13 kB: more than the 5 kB burst budget, so most of each burst queues) with audio
/// and 5 % downlink loss answered by NACK (resends queue too).
final class SFUServerPacingTests: XCTestCase {
    /// The RTP and RTCP handlers still allocate nothing when forwards and resends queue, and
    /// releasing queued packets (stamp, record, protect in the slot, send) allocates nothing.
    /// Everything queued leaves: the subscribers receive every burst.
    func testQueuedAndReleasedPacketsAllocateNothing() throws {
        try XCTSkipUnless(sb_alloc_count_available(), "allocations are not counted under AddressSanitizer")
        try SRTPLibrary.ensureInitialized()
        let server = try SFUServer(configuration: MediaConfiguration(host: "127.0.0.1", port: 0, srtpProfiles: [.aeadAES128GCM], ssrcSeed: 11))
        server.pacingEstimateOverride = 400_000
        let events = ServerEvents()
        events.attach(to: server)
        server.start()
        defer { server.stop() }
        let room = try WarmRoom(server: server, events: events, room: "pace", tag: "p", subscriberCount: 2, seed: 300)
        let (publisher, receivers) = (room.publisher, room.receivers)
        let session = try XCTUnwrap(publisher.srtp)
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 2_048, alignment: 16)
        defer { scratch.deallocate() }
        var audio = room.audioWriter()
        var video = room.videoWriter()
        var latencies: [UInt32] = []
        latencies.reserveCapacity(64_000)
        var releaseAllocations: UInt64 = 0
        var releasedDirectly: UInt64 = 0

        /// `count` bursts 200 ms apart (≈ 510 kbit/s of video: above the pacing rate while a
        /// burst lasts, below it on average), audio every 20 ms.
        func bursts(_ count: Int, measureRelease: Bool) throws {
            for burst in 0..<count {
                for packet in 0..<15 {
                    let length = try video.write(into: scratch, payloadLength: 800, session: session) {
                        BenchPayload.video($0, stamp: monotonicNanoseconds(), keyframe: burst % 16 == 0 && packet == 0)
                    }
                    publisher.send(Array(UnsafeRawBufferPointer(rebasing: scratch[0..<length])))
                }
                if measureRelease {
                    // Once the burst is in, release what waits right here, counting allocations.
                    usleep(3_000)
                    let (allocations, released) = server.loop.sync { _ -> (UInt64, UInt64) in
                        let releasedBefore = server.pacer.stats.released
                        sb_alloc_count_enable_this_thread(true)
                        let before = sb_alloc_count_read()
                        server.releasePaced(now: SFUServer.monotonicMicroseconds() + 100_000)
                        let made = sb_alloc_count_read() &- before
                        sb_alloc_count_enable_this_thread(false)
                        return (made, server.pacer.stats.released - releasedBefore)
                    }
                    releaseAllocations += allocations
                    releasedDirectly += released
                }
                for step in 0..<10 {
                    let length = try audio.write(into: scratch, payloadLength: 160, session: session) {
                        BenchPayload.audio($0, stamp: monotonicNanoseconds())
                    }
                    publisher.send(Array(UnsafeRawBufferPointer(rebasing: scratch[0..<length])))
                    for receiver in receivers { receiver.drain(measureFrom: 0, latencies: &latencies) }
                    for receiver in receivers { try receiver.sendNACKs(now: monotonicNanoseconds()) }
                    if step == 3 { for receiver in receivers { try receiver.sendReceiverReportAndREMB() } }
                    usleep(20_000)
                }
            }
            let end = Date().addingTimeInterval(0.5)
            while Date() < end {
                for receiver in receivers { receiver.drain(measureFrom: 0, latencies: &latencies) }
                usleep(1_000)
            }
        }

        try bursts(16, measureRelease: false)  // warm-up: caches, NACK state, keyframe
        let warm = server.loop.sync { _ in server.pacer.stats }
        XCTAssertGreaterThan(warm.queued, 100, "bursts queue at 1 Mbit/s")

        let ledger = AllocationLedger()
        server.loop.sync { loop in ledger.wrap(loop) }
        server.loop.sync { _ in sb_alloc_count_enable_this_thread(true) }
        let start = server.stats()
        try bursts(24, measureRelease: true)
        let end = server.stats()
        server.loop.sync { _ in sb_alloc_count_enable_this_thread(false) }
        let counts = server.loop.sync { _ in (ledger.rtp, ledger.rtpCalls, ledger.rtcp, ledger.rtcpCalls, ledger.timer, ledger.timerCalls) }
        let pacer = server.loop.sync { _ in (server.pacer.stats, server.pacer.freeSlotCount, server.pacer.config.slotCount) }
        let forwarded = end.counters.forwarded - start.counters.forwarded
        let resent = end.counters.retransmitted - start.counters.retransmitted
        print("""
            SFU pacing: \(forwarded) forwards + \(resent) resends; pacer queued \(pacer.0.queued - warm.queued), released \
            \(pacer.0.released - warm.released) (\(releasedDirectly) in measured releases), longest wait \(pacer.0.maxQueueTime / 1_000) ms, \
            dropped \(pacer.0.droppedVideoPackets) video / \(pacer.0.droppedRetransmissions) resends; allocations: RTP handler \(counts.0) \
            over \(counts.1) inputs, RTCP handler \(counts.2) over \(counts.3), release \(releaseAllocations), timer \(counts.4) over \(counts.5) ticks
            """)
        XCTAssertEqual(counts.0, 0, "allocations in the RTP handler with pacing")
        XCTAssertEqual(counts.2, 0, "allocations in the RTCP handler with pacing")
        XCTAssertGreaterThan(counts.3, 0)
        XCTAssertGreaterThan(releasedDirectly, 0, "the measured releases sent queued packets")
        XCTAssertEqual(releaseAllocations, 0, "allocations releasing queued packets")
        XCTAssertEqual(pacer.0.droppedVideoPackets, 0, "the pool never ran out")
        XCTAssertEqual(pacer.1, pacer.2, "every slot back in the pool once drained")
        XCTAssertGreaterThanOrEqual(forwarded, 24 * 15 * 2, "every video packet reached both subscribers")

        // The pacer's figures reach the server's stats (docs/stats.md, "Pacer"): the worker's
        // counters and each member's lane, computed in one snapshot, the lanes adding up to the worker.
        let snapshot = server.stats()
        let lanes = snapshot.members.compactMap(\.pacing)
        XCTAssertGreaterThan(snapshot.pacer.queued, 100)
        XCTAssertGreaterThan(snapshot.pacer.released, 100)
        XCTAssertEqual(lanes.map(\.counters).reduce(PacerStats(), +), snapshot.pacer, "the lanes add up to the worker's counters")
        XCTAssertGreaterThanOrEqual(lanes.filter { $0.counters.queued > 0 && $0.rateBps > 0 }.count, 2, "both paced subscribers queued")
        XCTAssertGreaterThan(resent, 0)
    }
}
