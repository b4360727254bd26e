import RTP
import XCTest
@testable import SFU
import SplitMix

let opusPublish = CodecDescription(name: "opus", payloadType: 111, clockRate: 48000, channels: 2)
let vp8Publish = CodecDescription(name: "VP8", payloadType: 96, clockRate: 90000)

/// Publisher-side extension ids (Chromium's usual numbering).
let publisherExtensions = HeaderExtensionIDs(mid: 4, rid: 10, repairedRid: 11, audioLevel: 1, absSendTime: 2, transportCC: 3)

/// A receiver whose payload types and extension ids all differ from the publisher's.
func receiver(_ cname: String, extensions: HeaderExtensionIDs = HeaderExtensionIDs(mid: 9, audioLevel: 5, absSendTime: 6, transportCC: 7)) -> ParticipantDescription {
    ParticipantDescription(
        cname: cname,
        receiveCodecs: [
            CodecDescription(name: "OPUS", payloadType: 109, clockRate: 48000, channels: 2),
            CodecDescription(name: "vp8", payloadType: 120, clockRate: 90000),
        ],
        receiveExtensions: extensions)
}

func audioTrack(_ id: String, ssrc: UInt32?, mid: String? = nil) -> TrackDescription {
    TrackDescription(id: TrackID(id), kind: .audio, codecs: [opusPublish], layers: [StreamDescription(ssrc: ssrc)], extensions: publisherExtensions, mid: mid)
}

func videoTrack(_ id: String, layers: [StreamDescription], request: KeyframeRequestMethod = .pli) -> TrackDescription {
    TrackDescription(id: TrackID(id), kind: .video, codecs: [vp8Publish], layers: layers, extensions: publisherExtensions, keyframeRequest: request)
}

/// VP8 payloads (RFC 7741): descriptor byte S=1/PID=0, then the payload header (P bit).
let vp8Keyframe: [UInt8] = [0x10, 0x00, 0x9D, 0x01, 0x2A, 0xAA]
let vp8Delta: [UInt8] = [0x10, 0x01, 0xBB, 0xCC]
let vp8Continuation: [UInt8] = [0x00, 0x55, 0x66]

func rtpPacket(ssrc: UInt32, seq: UInt16, ts: UInt32, pt: UInt8, extensions: [RTPHeaderExtension] = [], payload: [UInt8] = [1, 2, 3, 4], csrcs: [UInt32] = []) -> [UInt8] {
    // Builder input is fixed and valid: a failure here is a test-support bug.
    try! RTPPacketBuilder(payloadType: pt, sequenceNumber: seq, timestamp: ts, ssrc: ssrc, csrcs: csrcs, extensions: extensions).serialize(payload: payload)
}

/// A forwarded packet as the subscriber would receive it.
struct Received: Equatable {
    var subscriber: ParticipantID
    var ssrc: UInt32
    var seq: UInt16
    var ts: UInt32
    var pt: UInt8
    var marker: Bool
    var csrcs: [UInt32]
    var extensionProfile: UInt16?
    var extensions: [UInt8: [UInt8]]
    var payload: [UInt8]
}

func parseReceived(_ bytes: [UInt8], subscriber: ParticipantID) throws -> Received {
    try bytes.withUnsafeBytes { buffer in
        let view = try RTPPacketView(buffer)
        var extensions: [UInt8: [UInt8]] = [:]
        for element in view.headerExtensions { extensions[element.id] = Array(buffer[element.valueRange]) }
        return Received(
            subscriber: subscriber, ssrc: view.ssrc, seq: view.sequenceNumber, ts: view.timestamp, pt: view.payloadType,
            marker: view.marker, csrcs: view.csrcs, extensionProfile: view.extensionProfile, extensions: extensions,
            payload: Array(view.payload))
    }
}

/// Runs one packet through the router and writes every decision the way the socket layer would.
@discardableResult
func send(_ router: Router, from participant: ParticipantID, _ packet: [UInt8], now: Int64, transportSequenceNumber: UInt16? = nil, disposition: UnsafeMutablePointer<RTPDisposition>? = nil) throws -> [Received] {
    var batch = ForwardingBatch(capacity: 16)
    return try packet.withUnsafeBytes { input in
        let result = router.handleRTP(from: participant, packet: input, now: now, into: &batch)
        disposition?.pointee = result
        var out: [Received] = []
        for index in 0..<batch.count {
            var buffer = [UInt8](repeating: 0, count: 1500)
            let length = try buffer.withUnsafeMutableBytes { try batch.write(index, into: $0, transportSequenceNumber: transportSequenceNumber) }
            out.append(try parseReceived(Array(buffer[..<length]), subscriber: batch[index].subscriber))
        }
        return out
    }
}

func disposition(_ router: Router, from participant: ParticipantID, _ packet: [UInt8], now: Int64) -> RTPDisposition {
    var batch = ForwardingBatch(capacity: 16)
    return packet.withUnsafeBytes { router.handleRTP(from: participant, packet: $0, now: now, into: &batch) }
}

func rtcp(_ router: Router, from participant: ParticipantID, _ packets: [RTCPPacket], now: Int64, ntp: NTPTime = NTPTime(raw: 0)) throws -> [OutgoingRTCP] {
    let bytes = try RTCPCompound.serialize(packets)
    return try bytes.withUnsafeBytes { try router.handleRTCP(from: participant, packet: $0, now: now, ntp: ntp) }
}

/// Keyframe requests (PLI media SSRC / FIR entry SSRC) in `outgoing`, per participant.
func keyframeRequests(_ outgoing: [OutgoingRTCP]) -> [(ParticipantID, UInt32)] {
    outgoing.flatMap { message in
        message.packets.flatMap { packet -> [(ParticipantID, UInt32)] in
            switch packet {
            case .pictureLossIndication(let pli): [(message.participant, pli.mediaSSRC)]
            case .fullIntraRequest(let fir): fir.entries.map { (message.participant, $0.ssrc) }
            default: []
            }
        }
    }
}

let alice = ParticipantID(1)
let bob = ParticipantID(2)
let carol = ParticipantID(3)
let room = RoomID("room-1")

func makeRouter() -> Router { Router(config: RouterConfig(ssrcSeed: 42)) }

/// An RFC 4588 §4 retransmission on the test RTX stream (SSRC 0x1B, payload type 97): the
/// original sequence number (OSN) in the first two payload bytes, then the original payload.
func rtx(osn: UInt16, rtxSeq: UInt16, ts: UInt32, payload: [UInt8]) -> [UInt8] {
    rtpPacket(ssrc: 0x1B, seq: rtxSeq, ts: ts, pt: 97, payload: [UInt8(osn >> 8), UInt8(osn & 0xFF)] + payload)
}
