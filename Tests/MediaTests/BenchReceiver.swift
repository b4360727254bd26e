import Foundation
@testable import Media
import RTP
import SplitMix
import SRTP

/// One received stream at a benchmark subscriber: loss detection on the subscriber-side
/// (rewritten, continuous) sequence numbers and the NACK bookkeeping (RFC 4585 §6.2.1).
final class BenchStream {
    struct Missing {
        var nextNACK: UInt64
        var attempts: Int
    }

    let isVideo: Bool
    var highest: UInt16?
    /// Sequence numbers the stream advanced over (received or not): the denominator of loss.
    var expected: UInt64 = 0
    var missing: [UInt16: Missing] = [:]
    var repaired: UInt64 = 0
    var duplicates: UInt64 = 0
    /// Given up after `BenchReceiver.maxNACKAttempts` (counted in the residual loss).
    var abandoned: UInt64 = 0

    init(isVideo: Bool) { self.isVideo = isVideo }

    /// An original (not RTX) packet: true when new, false for a repair or duplicate.
    func original(_ sequence: UInt16, now: UInt64) -> Bool {
        guard let top = highest else {
            highest = sequence
            expected = 1
            return true
        }
        let ahead = Int(Int16(bitPattern: sequence &- top))
        if ahead > 0 {
            for step in 1..<ahead { missing[top &+ UInt16(step)] = Missing(nextNACK: now, attempts: 0) }
            expected += UInt64(ahead)
            highest = sequence
            return true
        }
        repair(sequence)
        return false
    }

    func repair(_ sequence: UInt16) {
        if missing.removeValue(forKey: sequence) != nil { repaired += 1 } else { duplicates += 1 }
    }
}

/// Receive side of a benchmark member (after `SyntheticClient` connected it): drains its
/// socket with recvmmsg, drops a seeded random share of RTP datagrams before SRTP (simulated
/// downlink loss), unprotects, records the added forwarding latency from the send stamp in
/// the payload, and NACKs what is missing.
final class BenchReceiver {
    /// 3 NACKs per packet, 120 ms apart: past the responder's 100 ms default-RTT throttle
    /// (`NackResponder.defaultRTT`; our receivers send no RR, so the SFU knows no RTT).
    static let maxNACKAttempts = 3
    static let nackRetryNanoseconds: UInt64 = 120_000_000

    let client: SyntheticClient
    let srtp: SRTPSession
    let lossRate: Double
    private var random: SplitMix64
    private let batch = UDPReceiveBatch(capacity: 64, slotSize: 2048)
    /// Media SSRC → stream; RTX SSRC → media SSRC.
    var streams: [UInt32: BenchStream] = [:]
    var rtxToMedia: [UInt32: UInt32] = [:]

    var datagrams: UInt64 = 0
    var simulatedDrops: UInt64 = 0
    var originals: UInt64 = 0
    var repairsReceived: UInt64 = 0
    var unprotectFailures: UInt64 = 0
    var unknownSSRC: UInt64 = 0
    var nackPackets: UInt64 = 0
    var nackedSequenceNumbers: UInt64 = 0

    init(client: SyntheticClient, tracks: [SFUServer.ReceivedTrack], lossRate: Double, seed: UInt64) throws {
        self.client = client
        guard let session = client.srtp else { throw BenchSetupError(reason: "\(client.member) has no SRTP keys") }
        srtp = session
        self.lossRate = lossRate
        random = SplitMix64(seed: seed)
        for track in tracks {
            streams[track.ssrc] = BenchStream(isVideo: track.isVideo)
            if track.isVideo { rtxToMedia[track.rtxSSRC] = track.ssrc }
        }
    }

    /// Processes everything pending; latency samples (ns) of originals sent at or after
    /// `measureFrom` go to `latencies`.
    func drain(measureFrom: UInt64, latencies: inout [UInt32]) {
        while true {
            let count = batch.receive(from: client.socket)
            guard count > 0 else { return }
            let now = monotonicNanoseconds()
            for index in 0..<count { handle(batch.datagram(at: index).bytes, now: now, measureFrom: measureFrom, latencies: &latencies) }
        }
    }

    private func handle(_ bytes: UnsafeRawBufferPointer, now: UInt64, measureFrom: UInt64, latencies: inout [UInt32]) {
        datagrams += 1
        // RFC 7983 demux: RTP/RTCP start with 128–191; RTCP types 192–223 are not ours to count.
        guard bytes.count >= 12, (128...191).contains(bytes[0]), !(192...223).contains(bytes[1]) else { return }
        if lossRate > 0, Double(random.next() >> 11) * 0x1p-53 < lossRate {
            simulatedDrops += 1
            return
        }
        let buffer = UnsafeMutableRawBufferPointer(mutating: bytes)
        let length: Int
        do { length = try srtp.unprotectRTP(buffer, length: bytes.count) } catch {
            unprotectFailures += 1
            return
        }
        let ssrc = UInt32(bytes[8]) << 24 | UInt32(bytes[9]) << 16 | UInt32(bytes[10]) << 8 | UInt32(bytes[11])
        let sequence = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
        var payload = 12 + 4 * Int(bytes[0] & 0x0F)
        if bytes[0] & 0x10 != 0, length >= payload + 4 {
            payload += 4 + 4 * (Int(bytes[payload + 2]) << 8 | Int(bytes[payload + 3]))
        }
        if let media = rtxToMedia[ssrc] {
            // RFC 4588 §4: the RTX payload starts with the original sequence number.
            guard length >= payload + 2, let stream = streams[media] else { return }
            repairsReceived += 1
            stream.repair(UInt16(bytes[payload]) << 8 | UInt16(bytes[payload + 1]))
            return
        }
        guard let stream = streams[ssrc] else {
            unknownSSRC += 1
            return
        }
        guard stream.original(sequence, now: now) else {
            repairsReceived += 1  // audio: resent as the original packet (no RTX for Opus)
            return
        }
        originals += 1
        let stamp = payload + (stream.isVideo ? BenchPayload.videoStampOffset : BenchPayload.audioStampOffset)
        guard length >= stamp + 8 else { return }
        let sent = UInt64(bigEndian: UnsafeRawBufferPointer(rebasing: bytes[stamp..<(stamp + 8)]).loadUnaligned(as: UInt64.self))
        if sent >= measureFrom, now >= sent { latencies.append(UInt32(clamping: now - sent)) }
    }

    /// Sends one generic NACK per stream with missing packets due for a (re)request.
    func sendNACKs(now: UInt64) throws {
        for (ssrc, stream) in streams where !stream.missing.isEmpty {
            guard let top = stream.highest else { continue }
            var due: [UInt16] = []
            for (sequence, entry) in stream.missing where entry.nextNACK <= now {
                if entry.attempts >= Self.maxNACKAttempts {
                    stream.missing[sequence] = nil
                    stream.abandoned += 1
                    continue
                }
                stream.missing[sequence] = BenchStream.Missing(nextNACK: now + Self.nackRetryNanoseconds, attempts: entry.attempts + 1)
                due.append(sequence)
            }
            guard !due.isEmpty else { continue }
            due.sort { Int16(bitPattern: $0 &- top) < Int16(bitPattern: $1 &- top) }
            // 80 per packet: 12 + 4 × ≤80 bytes stays under one MTU even with no BLP packing.
            var start = 0
            while start < due.count {
                let end = min(start + 80, due.count)
                var packet = try RTCPCompound.serialize([.nack(RTCPGenericNACK(
                    senderSSRC: client.ssrc, mediaSSRC: ssrc, sequenceNumbers: Array(due[start..<end])))])
                packet.reserveCapacity(packet.count + 32)
                try srtp.protectRTCP(&packet)
                client.send(packet)
                nackPackets += 1
                nackedSequenceNumbers += UInt64(end - start)
                start = end
            }
        }
    }

    /// Forgets warm-up losses (the first NACK of a subscription only creates its cache).
    func resetLossCounters() {
        for stream in streams.values {
            stream.expected = 0
            stream.missing.removeAll()
            stream.abandoned = 0
            stream.repaired = 0
            stream.duplicates = 0
        }
        simulatedDrops = 0
        repairsReceived = 0
        nackedSequenceNumbers = 0
    }

    var expected: UInt64 { streams.values.reduce(0) { $0 + $1.expected } }
    /// Still missing or given up: loss the subscriber's decoder would see.
    var residualLoss: UInt64 { streams.values.reduce(0) { $0 + UInt64($1.missing.count) + $1.abandoned } }
    var repaired: UInt64 { streams.values.reduce(0) { $0 + $1.repaired } }
}

/// Payload layout of benchmark packets: the sender's CLOCK_MONOTONIC ns, big-endian, after
/// the VP8 payload descriptor and header byte for video (RFC 7741 §4.2) or at the start for
/// audio; filler after it.
enum BenchPayload {
    static let audioStampOffset = 0
    static let videoStampOffset = 2

    /// Fills an audio payload with `stamp` then filler.
    static func audio(_ body: UnsafeMutableRawBufferPointer, stamp: UInt64) {
        body.storeBytes(of: stamp.bigEndian, toByteOffset: 0, as: UInt64.self)
        for index in 8..<body.count { body[index] = 0xAB }
    }

    /// VP8 payload: S=1, PID=0 descriptor; P bit 0 = keyframe (RFC 6386 §9.1), then `stamp`.
    static func video(_ body: UnsafeMutableRawBufferPointer, stamp: UInt64, keyframe: Bool) {
        body[0] = 0x10
        body[1] = keyframe ? 0x00 : 0x01
        body.storeBytes(of: stamp.bigEndian, toByteOffset: 2, as: UInt64.self)
        for index in 10..<body.count { body[index] = 0xCD }
    }
}

/// A benchmark could not set its room up (a failure of the run, not a figure).
struct BenchSetupError: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}
