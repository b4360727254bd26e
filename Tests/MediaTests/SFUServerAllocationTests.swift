import CAllocationCounter
import DTLS
import Foundation
import Glibc
@testable import Media
import RTP
import SRTP
import XCTest

/// Allocations on the SFU loop thread, attributed to the handler that made them.
final class AllocationLedger {
    var rtp: UInt64 = 0
    var rtpCalls: UInt64 = 0
    var rtcp: UInt64 = 0
    var rtcpCalls: UInt64 = 0
    var timer: UInt64 = 0
    var timerCalls: UInt64 = 0

    /// Wraps the loop's RTP, RTCP and timer handlers (call on the loop thread). The handlers
    /// hold the ledger strongly: the test's last use of it may come before the server stops,
    /// and ARC may release a local after its last use, while the loop still calls them.
    func wrap(_ loop: MediaLoop) {
        let rtpHandler = loop.onRTP
        let rtcpHandler = loop.onRTCP
        let timerHandler = loop.onTimer
        loop.onRTP = { [self] loop, session, bytes, now in
            let before = sb_alloc_count_read()
            sb_alloc_backtrace_this_thread(true)  // stacks (when armed) only from the forwarding path
            rtpHandler(loop, session, bytes, now)
            sb_alloc_backtrace_this_thread(false)
            rtp &+= sb_alloc_count_read() &- before
            rtpCalls &+= 1
        }
        loop.onRTCP = { [self] loop, session, bytes, now in
            let before = sb_alloc_count_read()
            sb_alloc_backtrace_this_thread(true)
            rtcpHandler(loop, session, bytes, now)
            sb_alloc_backtrace_this_thread(false)
            rtcp &+= sb_alloc_count_read() &- before
            rtcpCalls &+= 1
        }
        loop.onTimer = { [self] loop, now in
            let before = sb_alloc_count_read()
            sb_alloc_backtrace_this_thread(true)
            let next = timerHandler(loop, now)
            sb_alloc_backtrace_this_thread(false)
            timer &+= sb_alloc_count_read() &- before
            timerCalls &+= 1
            return next
        }
    }
}

extension BenchReceiver {
    /// What a browser sends about its downlink about once a second: an RR with a report
    /// block per received stream (loss, LSR/DLSR for the RTT) and a REMB (RFC 3550 §6.4.2,
    /// draft-alvestrand-rmcat-remb-03).
    func sendReceiverReportAndREMB() throws {
        let ssrcs = streams.keys.sorted()
        let blocks = ssrcs.map {
            RTCPReportBlock(ssrc: $0, fractionLost: 0, cumulativeLost: 0, extendedHighestSequenceNumber: 1_000, jitter: 30,
                            lastSenderReport: 0, delaySinceLastSenderReport: 0)
        }
        var packet = try RTCPCompound.serialize([
            .receiverReport(RTCPReceiverReport(ssrc: client.ssrc, reportBlocks: blocks)),
        ])
        packet.reserveCapacity(packet.count + 32)
        try srtp.protectRTCP(&packet)
        client.send(packet)
    }
}

/// Issue 3: "no per-packet heap allocation on the forwarding path", as a test that can fail
/// (`AllocationCounterTests` proves the counter sees allocations in this binary).
///
/// A warm room (1 publisher with audio + VP8 video with RTX, 3 subscribers, real UDP, DTLS,
/// SRTP GCM or AES-CM) forwards ≥ 5,000 packets while every subscriber drops 5 % (seeded) and NACKs
/// them, so NACK answering (RTX for video, the original for audio) and RTCP run too; the
/// publisher sends a sender report and each subscriber an RR with REMB every 100 cycles. The loop thread counts its allocations
/// (`sb_alloc_count_enable_this_thread` through `loop.perform`) and each handler's share is
/// measured around it.
final class SFUServerAllocationTests: XCTestCase {
    struct Figures {
        var forwarded: UInt64
        var resent: UInt64
        var rtpInputs: UInt64
        var rtpAllocations: UInt64
        var rtcpInputs: UInt64
        var rtcpAllocations: UInt64
        var total: UInt64
    }

    /// The whole RTP forwarding handler — SRTP unprotect, router, rewrite, cache insert, SRTP
    /// protect, sendmmsg queue — allocates nothing with AES-CM-HMAC-SHA1-80. Before libsrtp2 ran
    /// on the OpenSSL types (`CSRTPCrypto`), NSS allocated 14 times per SRTP call here (PK11
    /// contexts for AES-CTR and HMAC-SHA1 per packet).
    ///
    /// The RTCP handler — SRTCP unprotect, compound walk (`RTCPCompoundReader`), SR and NACK
    /// handling, NACK answering with the resends' rewrite, SRTP protect and send — allocates
    /// nothing either. Before (debug build) it made ≈ 11 allocations per RTCP input: arrays of
    /// parsed packets, the expanded NACK, the responder's decisions, and unspecialized
    /// `IndexingIterator` / `firstIndex(where:)` in `for … in` loops.
    func testForwardingPathAllocatesNothingWithAESCM() throws {
        try XCTSkipUnless(sb_alloc_count_available(), "allocations are not counted under AddressSanitizer")
        try assertHandlersAllocateNothing(profile: .aes128CMHMACSHA180, label: "AES-CM")
    }

    /// AES-GCM (what browsers pick): zero as well. Through NSS it was 5 per SRTP call (a
    /// softoken session context, PR_NewLock, freebl's GCM context), one unprotect per input plus
    /// one protect per forward.
    func testForwardingPathAllocatesNothingWithGCM() throws {
        try XCTSkipUnless(sb_alloc_count_available(), "allocations are not counted under AddressSanitizer")
        try assertHandlersAllocateNothing(profile: .aeadAES128GCM, label: "GCM")
    }

    /// The RTP and RTCP handlers of a warm room on `profile` allocate nothing at all.
    func assertHandlersAllocateNothing(profile: DTLSSRTPProfile, label: String, line: UInt = #line) throws {
        try SRTPLibrary.ensureInitialized()
        XCTAssertTrue(SRTPLibrary.usesOpenSSLCrypto, "libsrtp2 must run on the OpenSSL types (unset SWITCHBOARD_SRTP_NSS)", line: line)
        let figures = try measureRoom(profiles: [profile])
        XCTAssertGreaterThan(figures.rtpInputs, 0, line: line)
        XCTAssertEqual(figures.rtpAllocations, 0, "allocations in the RTP forwarding handler (\(label))", line: line)
        XCTAssertGreaterThan(figures.rtcpInputs, 0, line: line)
        XCTAssertEqual(figures.rtcpAllocations, 0, "allocations in the RTCP handler (\(label))", line: line)
    }

    func measureRoom(profiles: [DTLSSRTPProfile]) throws -> Figures {
        let server = try SFUServer(configuration: MediaConfiguration(host: "127.0.0.1", port: 0, srtpProfiles: profiles, ssrcSeed: 11))
        let events = ServerEvents()
        events.attach(to: server)
        server.start()
        defer { server.stop() }
        let room = try WarmRoom(server: server, events: events, room: "alloc", tag: "d", subscriberCount: 3, seed: 100)
        let (publisher, ssrcs, receivers) = (room.publisher, room.ssrcs, room.receivers)
        XCTAssertEqual(receivers.map { $0.streams.count }, [2, 2, 2], "each subscriber receives audio and video")
        let session = try XCTUnwrap(publisher.srtp)
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 2_048, alignment: 16)
        defer { scratch.deallocate() }
        var audio = room.audioWriter()
        var video = room.videoWriter()
        var latencies: [UInt32] = []
        latencies.reserveCapacity(64_000)

        func cycles(_ count: Int) throws {
            for cycle in 0..<count {
                let audioLength = try audio.write(into: scratch, payloadLength: 160, session: session) {
                    BenchPayload.audio($0, stamp: monotonicNanoseconds())
                }
                publisher.send(Array(UnsafeRawBufferPointer(rebasing: scratch[0..<audioLength])))
                let videoLength = try video.write(into: scratch, payloadLength: 800, session: session) {
                    BenchPayload.video($0, stamp: monotonicNanoseconds(), keyframe: cycle % 64 == 0)
                }
                publisher.send(Array(UnsafeRawBufferPointer(rebasing: scratch[0..<videoLength])))
                if cycle % 100 == 50 {
                    var report = try RTCPCompound.serialize([.senderReport(RTCPSenderReport(
                        ssrc: ssrcs.video[0], ntpTimestamp: UInt64(cycle) << 32, rtpTimestamp: video.timestamp,
                        packetCount: UInt32(cycle), octetCount: UInt32(cycle * 800)))])
                    report.reserveCapacity(report.count + 32)
                    try session.protectRTCP(&report)
                    publisher.send(report)
                }
                for receiver in receivers { receiver.drain(measureFrom: 0, latencies: &latencies) }
                for receiver in receivers { try receiver.sendNACKs(now: monotonicNanoseconds()) }
                if cycle % 100 == 25 {
                    for receiver in receivers { try receiver.sendReceiverReportAndREMB() }
                }
                usleep(200)  // ~2 inputs per 0.3 ms: the loop sees single packets, as in a call
            }
            // Let the last NACK answers and reports go out.
            let end = Date().addingTimeInterval(0.3)
            while Date() < end {
                for receiver in receivers { receiver.drain(measureFrom: 0, latencies: &latencies) }
                usleep(1_000)
            }
        }

        // Warm-up: caches are created by each subscription's first NACK, arrays and
        // dictionaries reach their working size, keyframes let video through.
        try cycles(400)
        let warm = server.stats()
        XCTAssertGreaterThan(warm.counters.retransmitted, 0, "warm-up answered NACKs")

        let ledger = AllocationLedger()
        server.loop.sync { loop in ledger.wrap(loop) }
        let stacks = ProcessInfo.processInfo.environment["SWITCHBOARD_ALLOC_STACKS"].flatMap(Int32.init) ?? 0
        sb_alloc_backtrace_arm(stacks)
        server.loop.sync { _ in sb_alloc_count_enable_this_thread(true) }
        let before = sb_alloc_count_read()
        let start = server.stats()
        try cycles(1_000)
        let end = server.stats()
        let total = sb_alloc_count_read() - before
        server.loop.sync { _ in sb_alloc_count_enable_this_thread(false) }
        let counts = server.loop.sync { _ in (ledger.rtp, ledger.rtpCalls, ledger.rtcp, ledger.rtcpCalls, ledger.timer, ledger.timerCalls) }
        let forwarded = end.counters.forwarded - start.counters.forwarded
        let resent = end.counters.retransmitted - start.counters.retransmitted
        print("""
            SFU loop-thread allocations (\(profiles[0].rawValue)) over \(forwarded) forwards + \(resent) resends (\(counts.1) RTP inputs, \
            \(counts.3) RTCP inputs, \(counts.5) timer ticks): total \(total); RTP handler \(counts.0); \
            RTCP handler \(counts.2); timer \(counts.4); rest (receive loop, commands, ICE tick, stats) \
            \(total - counts.0 - counts.2 - counts.4)
            """)
        for index in 0..<sb_alloc_backtrace_recorded() {
            print("allocation stack \(index):")
            fflush(stdout)
            sb_alloc_backtrace_print(index, STDOUT_FILENO)
        }
        sb_alloc_backtrace_arm(0)

        XCTAssertEqual(publisher.srtp?.profile.rawValue, profiles.first?.rawValue)
        XCTAssertGreaterThanOrEqual(forwarded, 5_000)
        XCTAssertGreaterThan(resent, 0, "NACKs were answered while counting")
        XCTAssertGreaterThan(counts.3, 0, "RTCP was handled while counting")
        return Figures(forwarded: forwarded, resent: resent, rtpInputs: counts.1, rtpAllocations: counts.0,
                       rtcpInputs: counts.3, rtcpAllocations: counts.2, total: total)
    }
}
