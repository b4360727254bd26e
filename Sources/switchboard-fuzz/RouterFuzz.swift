import RTP
import SFU

/// `Router.handleRTP` / `handleRTCP` / `tick` on a room with three participants: alice
/// publishes Opus and a three-layer SSRC simulcast with RTX, bob a rid simulcast (no SSRCs
/// signaled, REMB accepted), carol only subscribes with different payload types and ids.
///
/// Input: records `[control][length BE16][bytes]` until the input ends. Control bit 0:
/// RTCP (else RTP); bits 1–2: sender (alice, bob, carol, an unknown participant); bits 3–7:
/// milliseconds to advance the clock first (then `tick` and probe padding run).
/// Invariants: every forwarding decision writes a packet that parses, carries the decided
/// SSRC/sequence/PT and a suffix of the input payload (RTX unwrapping drops the OSN), goes to
/// a room member other than the sender; every RTCP the router emits serializes; probe padding
/// parses as RTP.
enum RouterFuzz {
    static let alice = ParticipantID(1), bob = ParticipantID(2), carol = ParticipantID(3), stranger = ParticipantID(99)
    static let room = RoomID("fuzz-room")
    /// Chromium's usual extension numbering on the publisher legs.
    static let publisherExtensions = HeaderExtensionIDs(mid: 4, rid: 10, repairedRid: 11, audioLevel: 1, absSendTime: 2, transportCC: 3)
    static let opus = CodecDescription(name: "opus", payloadType: 111, clockRate: 48000, channels: 2)
    static let vp8 = CodecDescription(name: "VP8", payloadType: 96, clockRate: 90000, rtxPayloadType: 97)

    static func makeRouter() throws(FuzzFailure) -> Router {
        let router = Router(config: RouterConfig(ssrcSeed: 42))
        let receiveCodecs = [opus, vp8]
        do {
            try router.join(alice, room: room, description: ParticipantDescription(cname: "a", receiveCodecs: receiveCodecs, receiveExtensions: publisherExtensions), now: 0)
            try router.join(bob, room: room, description: ParticipantDescription(cname: "b", receiveCodecs: receiveCodecs, receiveExtensions: publisherExtensions), now: 0)
            try router.join(carol, room: room, description: ParticipantDescription(
                cname: "c",
                receiveCodecs: [CodecDescription(name: "OPUS", payloadType: 109, clockRate: 48000, channels: 2),
                                CodecDescription(name: "vp8", payloadType: 120, clockRate: 90000, rtxPayloadType: 121)],
                receiveExtensions: HeaderExtensionIDs(mid: 9, audioLevel: 5, absSendTime: 6, transportCC: 7)), now: 0)
            try router.publish(alice, track: TrackDescription(id: TrackID("mic"), kind: .audio, codecs: [opus],
                                                              layers: [StreamDescription(ssrc: 0x1111)], extensions: publisherExtensions, mid: "0"), now: 0)
            try router.publish(alice, track: TrackDescription(
                id: TrackID("cam"), kind: .video, codecs: [vp8],
                layers: [StreamDescription(ssrc: 0x10, rtxSSRC: 0x11), StreamDescription(ssrc: 0x20, rtxSSRC: 0x21), StreamDescription(ssrc: 0x30, rtxSSRC: 0x31)],
                extensions: publisherExtensions, mid: "1"), now: 0)
            try router.publish(bob, track: TrackDescription(
                id: TrackID("cam"), kind: .video, codecs: [vp8], layers: ["q", "h", "f"].map { StreamDescription(ssrc: nil, rid: $0) },
                extensions: HeaderExtensionIDs(mid: 4, rid: 10, repairedRid: 11, absSendTime: 2), mid: "1", acceptsREMB: true), now: 0)
        } catch {
            throw .invariant("setting up the room failed: \(error)")
        }
        return router
    }

    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        let router = try makeRouter()
        var batch = ForwardingBatch(capacity: 8)
        var now: Int64 = 1_000_000
        var offset = 0
        var transportSequence: UInt16 = 0
        let members: Set<ParticipantID> = [alice, bob, carol]
        while offset < bytes.count {
            let control = bytes[offset]
            let declared = offset + 2 < bytes.count ? Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) : 0
            let start = min(offset + 3, bytes.count)
            let end = min(start + declared, bytes.count)
            let packet = Array(bytes[start..<end])
            offset = end
            let sender = [alice, bob, carol, stranger][Int(control >> 1) & 3]
            let advance = Int64(control >> 3) * 1_000
            if advance > 0 {
                now += advance
                try checkRTCP(router.tick(now: now, ntp: NTPTime(unixMicroseconds: 1_700_000_000_000_000 + now)), members: members)
                try probe(router, now: now, transportSequence: &transportSequence)
            }
            if control & 1 == 1 {
                let outgoing = packet.withUnsafeBytes { buffer in
                    try? router.handleRTCP(from: sender, packet: buffer, now: now, ntp: NTPTime(unixMicroseconds: 1_700_000_000_000_000 + now))
                }
                if let outgoing {
                    FuzzCounters.hit("router.rtcp-accepted")
                    try checkRTCP(outgoing, members: members)
                }
            } else {
                try forward(router, packet, from: sender, now: now, batch: &batch, members: members, transportSequence: &transportSequence)
            }
        }
    }

    private static func forward(_ router: Router, _ packet: [UInt8], from sender: ParticipantID, now: Int64, batch: inout ForwardingBatch,
                                members: Set<ParticipantID>, transportSequence: inout UInt16) throws(FuzzFailure) {
        let result: Result<Void, FuzzFailure> = packet.withUnsafeBytes { input in
            let disposition = router.handleRTP(from: sender, packet: input, now: now, into: &batch)
            do throws(FuzzFailure) {
                if disposition != .forwarded {
                    try expect(batch.isEmpty, "\(disposition) packet left forwarding decisions")
                    return .success(())
                }
                guard let inputPayload = (try? RTPPacketView(input))?.payload else {
                    throw FuzzFailure.invariant("forwarded a packet that does not parse")
                }
                FuzzCounters.hit("router.forwarded-packets")
                for index in 0..<batch.count {
                    let decision = batch[index]
                    try expect(decision.subscriber != sender && members.contains(decision.subscriber), "forwarded to \(decision.subscriber) from \(sender)")
                    var output = [UInt8](repeating: 0, count: packet.count + 256)
                    transportSequence &+= 1
                    let sequence = transportSequence
                    let written = output.withUnsafeMutableBytes { try? batch.write(index, into: $0, transportSequenceNumber: sequence) }
                    guard let written else { throw FuzzFailure.invariant("writing forwarding decision \(index) failed") }
                    try expect(written <= output.count, "wrote past the output")
                    let ok = output[..<written].withUnsafeBytes { buffer -> Bool in
                        guard let view = try? RTPPacketView(buffer) else { return false }
                        let payload = Array(view.payload)
                        return view.ssrc == decision.ssrc && view.sequenceNumber == decision.sequenceNumber
                            && view.payloadType == decision.payloadType && Array(inputPayload).suffix(payload.count) == payload[...]
                            && payload.count + 2 >= inputPayload.count
                    }
                    try expect(ok, "forwarded packet \(index) does not parse or differs from its decision/payload")
                }
                return .success(())
            } catch { return .failure(error) }
        }
        try result.get()
    }

    private static func checkRTCP(_ outgoing: [OutgoingRTCP], members: Set<ParticipantID>) throws(FuzzFailure) {
        for message in outgoing {
            try expect(members.contains(message.participant), "RTCP for non-member \(message.participant)")
            do { _ = try RTCPCompound.serialize(message.packets) } catch {
                throw .invariant("router emitted RTCP that does not serialize: \(error)")
            }
        }
    }

    private static func probe(_ router: Router, now: Int64, transportSequence: inout UInt16) throws(FuzzFailure) {
        var subscribers: [ParticipantID] = []
        router.takeProbingSubscribers(now: now, into: &subscribers)
        for subscriber in subscribers {
            var output = [UInt8](repeating: 0, count: 1500)
            // Bounded: a probe burst is at most its byte budget; 64 packets is far above one tick's share.
            for _ in 0..<64 {
                transportSequence &+= 1
                let sequence = transportSequence
                let written = output.withUnsafeMutableBytes {
                    try? router.writeProbePadding(subscriber: subscriber, now: now, transportSequenceNumber: sequence, into: $0)
                }
                guard let length = written ?? nil else { break }
                FuzzCounters.hit("router.probe-padding")
                let parses = output[..<length].withUnsafeBytes { (try? RTPPacketView($0)) != nil }
                try expect(parses, "probe padding does not parse as RTP")
            }
        }
    }
}
