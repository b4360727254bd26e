/// Parses an RTCP compound packet (RFC 3550 §6.1) into typed packets.
///
/// Common header of every packet (RFC 3550 §6.4.1):
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|  RC/FMT |       PT      |    length (32-bit words - 1)  |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// Compound validity rules of RFC 3550 §A.2 (first packet SR/RR, padding only on the last)
/// are not enforced: RFC 5506 reduced-size RTCP is legal in WebRTC. Unknown packet types and
/// unknown feedback formats are returned as `.opaque`.
public enum RTCPCompound {
    /// Parses every packet in `buffer`.
    public static func parse(_ buffer: UnsafeRawBufferPointer) throws(RTCPError) -> [RTCPPacket] {
        var packets: [RTCPPacket] = []
        var offset = 0
        while offset < buffer.count {
            guard buffer.count - offset >= 4 else { throw .truncated }
            let first = buffer[offset]
            let version = first >> 6
            guard version == 2 else { throw .badVersion(version) }
            let length = (Int(buffer.be16(offset + 2)) + 1) * 4
            guard length <= buffer.count - offset else { throw .truncated }
            var bodyEnd = offset + length
            if first & 0x20 != 0 {
                let padding = Int(buffer[bodyEnd - 1])
                guard padding > 0, padding <= length - 4 else { throw .badPadding }
                bodyEnd -= padding
            }
            let body = UnsafeRawBufferPointer(rebasing: buffer[(offset + 4)..<bodyEnd])
            packets.append(try parsePacket(type: buffer[offset + 1], count: first & 0x1F, body: body))
            offset += length
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

    static func parsePacket(type: UInt8, count: UInt8, body: UnsafeRawBufferPointer) throws(RTCPError) -> RTCPPacket {
        let malformed = RTCPError.malformed(packetType: type)
        switch type {
        case RTCPPacketType.senderReport:
            guard body.count >= 24 + 24 * Int(count) else { throw malformed }
            return .senderReport(RTCPSenderReport(
                ssrc: body.be32(0), ntpTimestamp: body.be64(4), rtpTimestamp: body.be32(12),
                packetCount: body.be32(16), octetCount: body.be32(20),
                reportBlocks: reportBlocks(body, at: 24, count: Int(count))))
        case RTCPPacketType.receiverReport:
            guard body.count >= 4 + 24 * Int(count) else { throw malformed }
            return .receiverReport(RTCPReceiverReport(
                ssrc: body.be32(0), reportBlocks: reportBlocks(body, at: 4, count: Int(count))))
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
        case RTCPPacketType.transportFeedback where count == 1:
            guard body.count >= 8, (body.count - 8) % 4 == 0 else { throw malformed }
            var sequenceNumbers: [UInt16] = []
            var offset = 8
            while offset < body.count {
                let pid = body.be16(offset)
                let blp = body.be16(offset + 2)
                sequenceNumbers.append(pid)
                for bit in 0..<16 where blp & (1 << bit) != 0 {
                    sequenceNumbers.append(pid &+ UInt16(bit + 1))
                }
                offset += 4
            }
            return .nack(RTCPGenericNACK(senderSSRC: body.be32(0), mediaSSRC: body.be32(4), sequenceNumbers: sequenceNumbers))
        case RTCPPacketType.transportFeedback where count == 15:
            guard body.count >= 8 else { throw malformed }
            return .transportFeedback(RTCPTransportFeedback(
                senderSSRC: body.be32(0), mediaSSRC: body.be32(4), body: Array(body[8...])))
        case RTCPPacketType.payloadFeedback where count == 1:
            guard body.count >= 8 else { throw malformed }
            return .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: body.be32(0), mediaSSRC: body.be32(4)))
        case RTCPPacketType.payloadFeedback where count == 4:
            guard body.count >= 8, (body.count - 8) % 8 == 0 else { throw malformed }
            let entries = stride(from: 8, to: body.count, by: 8).map {
                RTCPFullIntraRequest.Entry(ssrc: body.be32($0), sequenceNumber: body[$0 + 4])
            }
            return .fullIntraRequest(RTCPFullIntraRequest(senderSSRC: body.be32(0), mediaSSRC: body.be32(4), entries: entries))
        case RTCPPacketType.payloadFeedback where count == 15
            && body.count >= 16 && body.be32(8) == 0x5245_4D42:  // "REMB"
            let ssrcCount = Int(body[12])
            guard body.count >= 16 + 4 * ssrcCount else { throw malformed }
            let exponent = UInt64(body[13] >> 2)
            let mantissa = UInt64(body.be24(13) & 0x3FFFF)
            // Exponent up to 63 with an 18-bit mantissa can overflow 64 bits: saturate.
            let bitrate = exponent + 18 > 64 && mantissa >> (64 - exponent) != 0 ? UInt64.max : mantissa << exponent
            let ssrcs = (0..<ssrcCount).map { body.be32(16 + 4 * $0) }
            return .remb(RTCPReceiverEstimatedMaxBitrate(senderSSRC: body.be32(0), bitrate: bitrate, ssrcs: ssrcs))
        default:
            return .opaque(RTCPOpaquePacket(packetType: type, countOrFormat: count, body: Array(body)))
        }
    }

    static func reportBlocks(_ body: UnsafeRawBufferPointer, at start: Int, count: Int) -> [RTCPReportBlock] {
        (0..<count).map { index in
            let base = start + 24 * index
            let rawLost = body.be24(base + 5)
            // Sign-extend the 24-bit cumulative loss.
            let lost = Int32(bitPattern: rawLost << 8) >> 8
            return RTCPReportBlock(
                ssrc: body.be32(base), fractionLost: body[base + 4], cumulativeLost: lost,
                extendedHighestSequenceNumber: body.be32(base + 8), jitter: body.be32(base + 12),
                lastSenderReport: body.be32(base + 16), delaySinceLastSenderReport: body.be32(base + 20))
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
