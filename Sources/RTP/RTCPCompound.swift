/// Parses an RTCP compound packet (RFC 3550 §6.1) into owning, typed packets: the framing
/// of `RTCPCompoundReader` (common header diagram there), the in-place decoding of
/// `RTCPPacketView.decoded()`, copied into values. Compound validity rules of RFC 3550 §A.2
/// are not enforced (RFC 5506 reduced-size RTCP is legal in WebRTC). Unknown packet types and
/// unknown feedback formats are returned as `.opaque`.
public enum RTCPCompound {
    /// Parses every packet in `buffer` into owning values (allocates; the SFU's per-packet
    /// path walks views with `RTCPCompoundReader` instead).
    public static func parse(_ buffer: UnsafeRawBufferPointer) throws(RTCPError) -> [RTCPPacket] {
        var packets: [RTCPPacket] = []
        var reader = RTCPCompoundReader(buffer)
        while let view = try reader.next() {
            packets.append(try parsePacket(view))
        }
        return packets
    }

    /// `[UInt8]` convenience.
    public static func parse(_ bytes: [UInt8]) throws(RTCPError) -> [RTCPPacket] {
        let result: Result<[RTCPPacket], RTCPError> = bytes.withUnsafeBytes { buffer in
            do throws(RTCPError) { return .success(try parse(buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// The owning value of one packet: the in-place decode (`RTCPPacketView.decoded()`)
    /// copied out, plus SDES, BYE and APP, and `.opaque` for anything else.
    static func parsePacket(_ view: RTCPPacketView) throws(RTCPError) -> RTCPPacket {
        let type = view.packetType
        let count = view.countOrFormat
        let body = view.body
        let malformed = RTCPError.malformed(packetType: type)
        switch try view.decoded() {
        case .senderReport(let report):
            return .senderReport(RTCPSenderReport(
                ssrc: report.ssrc, ntpTimestamp: report.ntpTimestamp, rtpTimestamp: report.rtpTimestamp,
                packetCount: report.packetCount, octetCount: report.octetCount, reportBlocks: report.blocks.all))
        case .receiverReport(let report):
            return .receiverReport(RTCPReceiverReport(ssrc: report.ssrc, reportBlocks: report.blocks.all))
        case .nack(let nack):
            var sequenceNumbers: [UInt16] = []
            nack.appendSequenceNumbers(to: &sequenceNumbers)
            return .nack(RTCPGenericNACK(senderSSRC: nack.senderSSRC, mediaSSRC: nack.mediaSSRC, sequenceNumbers: sequenceNumbers))
        case .transportFeedback(let senderSSRC, let mediaSSRC, let feedback):
            return .transportFeedback(RTCPTransportFeedback(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, body: Array(feedback)))
        case .pictureLossIndication(let pli):
            return .pictureLossIndication(pli)
        case .fullIntraRequest(let fir):
            let entries = (0..<fir.entryCount).map(fir.entry(at:))
            return .fullIntraRequest(RTCPFullIntraRequest(senderSSRC: fir.senderSSRC, mediaSSRC: fir.mediaSSRC, entries: entries))
        case .remb(let remb):
            let ssrcs = (0..<remb.ssrcCount).map(remb.ssrc(at:))
            return .remb(RTCPReceiverEstimatedMaxBitrate(senderSSRC: remb.senderSSRC, bitrate: remb.bitrate, ssrcs: ssrcs))
        case .sourceDescription, .goodbye, .application, .other:
            break
        }
        switch type {
        case RTCPPacketType.sourceDescription:
            return .sourceDescription(try sourceDescription(body, count: Int(count)))
        case RTCPPacketType.goodbye:
            guard body.count >= 4 * Int(count) else { throw malformed }
            let ssrcs = (0..<Int(count)).map { body.be32(4 * $0) }
            var reason: [UInt8]?
            let reasonStart = 4 * Int(count)
            if body.count > reasonStart {
                let reasonLength = Int(body[reasonStart])
                guard reasonStart + 1 + reasonLength <= body.count else { throw malformed }
                reason = Array(body[(reasonStart + 1)..<(reasonStart + 1 + reasonLength)])
            }
            return .goodbye(RTCPGoodbye(ssrcs: ssrcs, reason: reason))
        case RTCPPacketType.application:
            guard body.count >= 8 else { throw malformed }
            return .application(RTCPApplication(
                subtype: count, ssrc: body.be32(0), name: body.be32(4), data: Array(body[8...])))
        default:
            return .opaque(RTCPOpaquePacket(packetType: type, countOrFormat: count, body: Array(body)))
        }
    }

    /// SDES chunks: SSRC, then items (type, length, value) until a null type octet, then
    /// zero padding to the next 32-bit boundary (RFC 3550 §6.5).
    static func sourceDescription(_ body: UnsafeRawBufferPointer, count: Int) throws(RTCPError) -> RTCPSourceDescription {
        let malformed = RTCPError.malformed(packetType: RTCPPacketType.sourceDescription)
        var chunks: [RTCPSourceDescription.Chunk] = []
        var offset = 0
        for _ in 0..<count {
            guard offset + 4 <= body.count else { throw malformed }
            let ssrc = body.be32(offset)
            offset += 4
            var items: [RTCPSourceDescription.Item] = []
            while true {
                guard offset < body.count else { throw malformed }
                let type = body[offset]
                if type == 0 {
                    offset = (offset + 4) & ~3  // null item + padding to the 32-bit boundary
                    break
                }
                guard offset + 2 <= body.count else { throw malformed }
                let length = Int(body[offset + 1])
                guard offset + 2 + length <= body.count else { throw malformed }
                items.append(.init(type: type, value: Array(body[(offset + 2)..<(offset + 2 + length)])))
                offset += 2 + length
            }
            chunks.append(.init(ssrc: ssrc, items: items))
        }
        return RTCPSourceDescription(chunks: chunks)
    }
}
