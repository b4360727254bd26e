import RTP
import XCTest
@testable import SFU

/// First packet of a VP8 keyframe of `size`: RFC 7741 descriptor (S = 1), then RFC 6386
/// §9.1 frame tag (P = 0), start code, 14-bit width and height little-endian.
func vp8Keyframe(_ size: (Int, Int)) -> [UInt8] {
    [0x10, 0x00, 0x00, 0x00, 0x9D, 0x01, 0x2A,
     UInt8(size.0 & 0xFF), UInt8(size.0 >> 8), UInt8(size.1 & 0xFF), UInt8(size.1 >> 8)]
}

/// One simulated subscriber: its downlink (`SimulatedLink`), its transport-cc receiver
/// (`TransportFeedbackGenerator`, feedback every 100 ms through the wire codec) or a scripted
/// REMB, and what it observed.
final class SimulatedSubscriber {
    let id: ParticipantID
    var link: SimulatedLink
    let transportCC: Bool
    /// Scripted REMB (bit/s at a time), sent every 500 ms when set.
    var remb: ((Int64) -> UInt64)?
    /// Scripted fraction lost (of 256) in a receiver report every second, when set.
    var reportLoss: ((Int64) -> UInt8)?
    var generator = TransportFeedbackGenerator()
    var transportSequence: UInt16 = 0
    var inFlight: [(arrival: Int64, seq: UInt16)] = []
    // Observations.
    var lastVideoLayer: Int?
    var lastVideoSeq: UInt16?
    /// Video source changes seen in the forwarded stream: when, to which layer, on a keyframe?
    var switches: [(time: Int64, to: Int, keyframe: Bool)] = []
    var videoTimes: [Int64] = []
    /// Every forwarded video packet: when, which layer.
    var videoLog: [(time: Int64, layer: Int)] = []
    var audioTimes: [Int64] = []
    var paddingTimes: [Int64] = []
    var paddingSSRCs: Set<UInt32> = []
    /// Target layer (nil = paused) whenever it changed, sampled after each tick.
    var targets: [(time: Int64, target: Int?)] = []
    /// Sequence continuity of the video SSRC: packets whose number was not last + 1.
    var videoSequenceBreaks = 0

    init(id: ParticipantID, capacityBps: Double, transportCC: Bool) {
        self.id = id
        link = SimulatedLink(capacityBps: capacityBps)
        self.transportCC = transportCC
    }

    func target(at time: Int64) -> Int?? {
        targets.last { $0.time <= time }.map { $0.target }
    }
}

/// Publisher alice sends audio (20 ms, ≈ 48 kbit/s) and three simulcast VP8 layers at
/// `layerRates` in 25 frames/s (keyframe on the next frame after a PLI for that layer); the
/// router forwards to the simulated subscribers; the clock steps 5 ms; `tick` every 20 ms,
/// probe padding written right after it as the socket layer does.
final class DownlinkSimulation {
    let router = makeRouter()
    var now: Int64 = 0
    var layerRates: [Int] = [150_000, 500_000, 1_500_000]
    /// Picture sizes written into the layers' VP8 keyframes.
    let layerSizes = [(320, 180), (640, 360), (1280, 720)]
    let layerSSRCs: [UInt32] = [0x10, 0x20, 0x30]
    let audioSSRC: UInt32 = 0xA1
    var sequence: [UInt32: UInt16] = [:]
    var keyframeDue: Set<UInt32> = []
    var subscribers: [SimulatedSubscriber] = []
    var batch = ForwardingBatch(capacity: 16)
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
    /// RTCP the router sent alice.
    var toPublisher: [RTCPPacket] = []

    /// RTX payload type 121 (apt 120) for subscribers created with `rtx`.
    init(subscribers specs: [(ParticipantID, capacityBps: Double, transportCC: Bool)], rtx: Set<ParticipantID> = [], publisher: TrackDescription? = nil) throws {
        try router.join(alice, room: room, description: receiver("a"), now: 0)
        for spec in specs {
            var extensions = HeaderExtensionIDs(mid: 9, audioLevel: 5, absSendTime: 6, transportCC: 7)
            if !spec.transportCC { extensions.transportCC = 0 }
            var description = receiver("s\(spec.0.raw)", extensions: extensions)
            if rtx.contains(spec.0) { description.receiveCodecs[1].rtxPayloadType = 121 }
            try router.join(spec.0, room: room, description: description, now: 0)
            subscribers.append(SimulatedSubscriber(id: spec.0, capacityBps: spec.capacityBps, transportCC: spec.transportCC))
        }
        try router.publish(alice, track: audioTrack("mic", ssrc: audioSSRC), now: 0)
        try router.publish(alice, track: publisher ?? videoTrack("cam", layers: layerSSRCs.map { StreamDescription(ssrc: $0) }), now: 0)
        keyframeDue = Set(layerSSRCs)
    }

    deinit { buffer.deallocate() }

    func subscriber(_ id: ParticipantID) -> SimulatedSubscriber { subscribers.first { $0.id == id }! }

    /// Runs until `end` (µs), calling `script` before every step.
    func run(until end: Int64, script: (Int64) -> Void = { _ in }) throws {
        while now < end {
            now += 5_000
            script(now)
            if now % 20_000 == 0 { try emit(ssrc: audioSSRC, payload: [UInt8](repeating: 0x55, count: 100), layer: nil, keyframe: false) }
            if now % 40_000 == 0 { try emitFrames() }
            for subscriber in subscribers { deliver(subscriber) }
            if now % 100_000 == 0 { try sendFeedback() }
            if now % 20_000 == 0 { try tick() }
        }
    }

    private func emitFrames() throws {
        for (layer, ssrc) in layerSSRCs.enumerated() {
            let bytes = layerRates[layer] / 25 / 8
            let count = (bytes + 1099) / 1100
            let keyframe = keyframeDue.remove(ssrc) != nil
            for index in 0..<count {
                let prefix = index > 0 ? vp8Continuation : keyframe ? vp8Keyframe(layerSizes[layer]) : vp8Delta
                let payload = prefix + [UInt8](repeating: 0, count: max(bytes / count - prefix.count, 0))
                try emit(ssrc: ssrc, payload: payload, layer: layer, keyframe: keyframe && index == 0)
            }
        }
    }

    private func emit(ssrc: UInt32, payload: [UInt8], layer: Int?, keyframe: Bool) throws {
        let seq = sequence[ssrc, default: 1000]
        sequence[ssrc] = seq &+ 1
        let clock: Int64 = layer == nil ? 48 : 90
        let packet = rtpPacket(ssrc: ssrc, seq: seq, ts: UInt32(truncatingIfNeeded: now / 1000 * clock), pt: layer == nil ? 111 : 96, payload: payload)
        try packet.withUnsafeBytes { input in
            router.handleRTP(from: alice, packet: input, now: now, into: &batch)
            for index in 0..<batch.count {
                let subscriber = self.subscriber(batch[index].subscriber)
                let tcc: UInt16? = subscriber.transportCC ? subscriber.transportSequence : nil
                let written = try batch.write(index, into: buffer, transportSequenceNumber: tcc)
                router.recordSent(subscriber: subscriber.id, transportSequenceNumber: tcc, size: written, now: now)
                if let layer {
                    if subscriber.lastVideoLayer != layer { subscriber.switches.append((now, layer, keyframe)) }
                    subscriber.lastVideoLayer = layer
                    let out = batch[index].sequenceNumber
                    if let last = subscriber.lastVideoSeq, out != last &+ 1 { subscriber.videoSequenceBreaks += 1 }
                    subscriber.lastVideoSeq = out
                    subscriber.videoTimes.append(now)
                    subscriber.videoLog.append((now, layer))
                } else {
                    subscriber.audioTimes.append(now)
                }
                transmit(written, tcc: tcc, to: subscriber)
            }
        }
    }

    private func transmit(_ size: Int, tcc: UInt16?, to subscriber: SimulatedSubscriber) {
        if subscriber.transportCC { subscriber.transportSequence &+= 1 }
        guard let arrival = subscriber.link.send(size: size, now: now), let tcc else { return }
        subscriber.inFlight.append((arrival, tcc))
    }

    private func deliver(_ subscriber: SimulatedSubscriber) {
        var delivered = 0
        for packet in subscriber.inFlight where packet.arrival <= now {
            subscriber.generator.record(sequenceNumber: packet.seq, arrival: packet.arrival)
            delivered += 1
        }
        if delivered > 0 { subscriber.inFlight.removeFirst(delivered) }
    }

    private func sendFeedback() throws {
        for subscriber in subscribers {
            var packets: [RTCPPacket] = []
            if subscriber.transportCC {
                packets += subscriber.generator.rtcpPackets(now: now, senderSSRC: 0xB0B0 + subscriber.id.raw, mediaSSRC: 0).map { .transportFeedback($0) }
            }
            if let remb = subscriber.remb, now % 500_000 == 0 {
                packets.append(.remb(RTCPReceiverEstimatedMaxBitrate(senderSSRC: 0xB0B0 + subscriber.id.raw, bitrate: remb(now), ssrcs: [])))
            }
            if let loss = subscriber.reportLoss, now % 1_000_000 == 0 {
                let blocks = router.subscriptions(of: subscriber.id).map {
                    RTCPReportBlock(ssrc: $0.ssrc, fractionLost: loss(now), cumulativeLost: 0, extendedHighestSequenceNumber: 0,
                                    jitter: 0, lastSenderReport: 0, delaySinceLastSenderReport: 0)
                }
                packets.append(.receiverReport(RTCPReceiverReport(ssrc: 0xB0B0 + subscriber.id.raw, reportBlocks: blocks)))
            }
            guard !packets.isEmpty else { continue }
            handle(try rtcp(router, from: subscriber.id, packets, now: now))
        }
    }

    private func tick() throws {
        handle(router.tick(now: now, ntp: NTPTime(unixMicroseconds: 1_700_000_000_000_000 + now)))
        var probing: [ParticipantID] = []
        router.takeProbingSubscribers(now: now, into: &probing)
        for id in probing {
            let subscriber = self.subscriber(id)
            while let written = try router.writeProbePadding(subscriber: id, now: now, transportSequenceNumber: subscriber.transportSequence, into: buffer) {
                let view = try RTPPacketView(UnsafeRawBufferPointer(rebasing: buffer[0..<written]))
                XCTAssertTrue(view.payload.isEmpty, "padding-only")
                XCTAssertTrue(view.hasPadding)
                subscriber.paddingTimes.append(now)
                subscriber.paddingSSRCs.insert(view.ssrc)
                if let video = router.subscriptions(of: id).first(where: { $0.kind == .video }), view.ssrc == video.ssrc {
                    // Padding on the media SSRC takes the next number; media continues after it.
                    if let last = subscriber.lastVideoSeq, view.sequenceNumber != last &+ 1 { subscriber.videoSequenceBreaks += 1 }
                    subscriber.lastVideoSeq = view.sequenceNumber
                }
                transmit(written, tcc: subscriber.transportCC ? subscriber.transportSequence : nil, to: subscriber)
            }
        }
        for subscriber in subscribers {
            guard let video = router.downlinkStats(subscriber.id, now: now)?.video.first else { continue }
            let target: Int? = video.paused ? nil : video.targetLayer
            if subscriber.targets.last.map({ $0.target != target }) ?? true { subscriber.targets.append((now, target)) }
        }
    }

    private func handle(_ outgoing: [OutgoingRTCP]) {
        for (participant, ssrc) in keyframeRequests(outgoing) where participant == alice { keyframeDue.insert(ssrc) }
        for message in outgoing where message.participant == alice { toPublisher += message.packets }
    }
}
