extension RTCPGenericNACK {
    /// Packs `sequenceNumbers` into RFC 4585 §6.2.1 (PID, BLP) pairs: duplicates removed,
    /// ordered by wraparound-aware distance from the first number, each pair covering PID
    /// and the 16 numbers after it.
    public var packedItems: [(pid: UInt16, blp: UInt16)] {
        guard let reference = sequenceNumbers.first else { return [] }
        let ordered = Set(sequenceNumbers).sorted {
            Int16(bitPattern: $0 &- reference) < Int16(bitPattern: $1 &- reference)
        }
        var items: [(pid: UInt16, blp: UInt16)] = []
        for seq in ordered {
            if let last = items.last, case let distance = seq &- last.pid, distance >= 1, distance <= 16 {
                items[items.count - 1].blp |= 1 << (distance - 1)
            } else {
                items.append((seq, 0))
            }
        }
        return items
    }
}

extension RTCPReceiverEstimatedMaxBitrate {
    /// 6-bit exponent and 18-bit mantissa with mantissa << exponent ≤ bitrate (rounds down).
    var exponentAndMantissa: (exponent: UInt8, mantissa: UInt32) {
        var exponent: UInt8 = 0
        while exponent < 63, bitrate >> exponent >= 1 << 18 { exponent += 1 }
        return (exponent, UInt32(truncatingIfNeeded: min(bitrate >> exponent, 0x3FFFF)))
    }
}

extension RTCPPacket {
    /// Bytes this packet occupies on the wire (always a multiple of 4).
    public var encodedLength: Int {
        switch self {
        case .senderReport(let sr): 28 + 24 * sr.reportBlocks.count
        case .receiverReport(let rr): 8 + 24 * rr.reportBlocks.count
        case .sourceDescription(let sdes):
            4 + sdes.chunks.reduce(0) { total, chunk in
                let items = chunk.items.reduce(0) { $0 + 2 + $1.value.count }
                return total + 4 + ((items + 4) & ~3)  // + null octet, padded to 4
            }
        case .goodbye(let bye): 4 + 4 * bye.ssrcs.count + (bye.reason.map { ($0.count + 1 + 3) & ~3 } ?? 0)
        case .application(let app): 12 + ((app.data.count + 3) & ~3)
        case .nack(let nack): 12 + 4 * nack.packedItems.count
        case .transportFeedback(let tcc): 12 + ((tcc.body.count + 3) & ~3)
        case .pictureLossIndication: 12
        case .fullIntraRequest(let fir): 12 + 8 * fir.entries.count
        case .remb(let remb): 20 + 4 * remb.ssrcs.count
        case .opaque(let packet): 4 + ((packet.body.count + 3) & ~3)
        }
    }

    /// Writes this packet at the start of `output`; returns the byte count.
    @discardableResult
    public func write(into output: UnsafeMutableRawBufferPointer) throws(RTCPError) -> Int {
        let length = encodedLength
        guard output.count >= length else { throw .bufferTooSmall }
        guard length / 4 - 1 <= 0xFFFF else { throw .invalidField }
        for index in 0..<length { output[index] = 0 }
        var w = Writer(output: output, offset: 4)
        let count: Int
        let type: UInt8
        switch self {
        case .senderReport(let sr):
            (type, count) = (RTCPPacketType.senderReport, sr.reportBlocks.count)
            w.u32(sr.ssrc); w.u32(UInt32(truncatingIfNeeded: sr.ntpTimestamp >> 32))
            w.u32(UInt32(truncatingIfNeeded: sr.ntpTimestamp)); w.u32(sr.rtpTimestamp)
            w.u32(sr.packetCount); w.u32(sr.octetCount)
            sr.reportBlocks.forEach { w.block($0) }
        case .receiverReport(let rr):
            (type, count) = (RTCPPacketType.receiverReport, rr.reportBlocks.count)
            w.u32(rr.ssrc)
            rr.reportBlocks.forEach { w.block($0) }
        case .sourceDescription(let sdes):
            (type, count) = (RTCPPacketType.sourceDescription, sdes.chunks.count)
            for chunk in sdes.chunks {
                let start = w.offset
                w.u32(chunk.ssrc)
                for item in chunk.items {
                    guard item.type != 0, item.value.count <= 255 else { throw .invalidField }
                    w.u8(item.type); w.u8(UInt8(item.value.count)); w.bytes(item.value)
                }
                w.offset = start + 4 + (((w.offset - start - 4) + 4) & ~3)  // null + pad (zeroed)
            }
        case .goodbye(let bye):
            (type, count) = (RTCPPacketType.goodbye, bye.ssrcs.count)
            bye.ssrcs.forEach { w.u32($0) }
            if let reason = bye.reason {
                guard reason.count <= 255 else { throw .invalidField }
                w.u8(UInt8(reason.count)); w.bytes(reason)
            }
        case .application(let app):
            guard app.subtype < 32 else { throw .invalidField }
            (type, count) = (RTCPPacketType.application, Int(app.subtype))
            w.u32(app.ssrc); w.u32(app.name); w.bytes(app.data)
        case .nack(let nack):
            (type, count) = (RTCPPacketType.transportFeedback, 1)
            w.u32(nack.senderSSRC); w.u32(nack.mediaSSRC)
            for item in nack.packedItems { w.u16(item.pid); w.u16(item.blp) }
        case .transportFeedback(let tcc):
            (type, count) = (RTCPPacketType.transportFeedback, 15)
            w.u32(tcc.senderSSRC); w.u32(tcc.mediaSSRC); w.bytes(tcc.body)
        case .pictureLossIndication(let pli):
            (type, count) = (RTCPPacketType.payloadFeedback, 1)
            w.u32(pli.senderSSRC); w.u32(pli.mediaSSRC)
        case .fullIntraRequest(let fir):
            (type, count) = (RTCPPacketType.payloadFeedback, 4)
            w.u32(fir.senderSSRC); w.u32(fir.mediaSSRC)
            for entry in fir.entries { w.u32(entry.ssrc); w.u8(entry.sequenceNumber); w.offset += 3 }
        case .remb(let remb):
            guard remb.ssrcs.count <= 255 else { throw .invalidField }
            (type, count) = (RTCPPacketType.payloadFeedback, 15)
            w.u32(remb.senderSSRC); w.u32(0); w.u32(0x5245_4D42)
            let (exponent, mantissa) = remb.exponentAndMantissa
            w.u8(UInt8(remb.ssrcs.count))
            w.u8(exponent << 2 | UInt8(truncatingIfNeeded: mantissa >> 16))
            w.u16(UInt16(truncatingIfNeeded: mantissa))
            remb.ssrcs.forEach { w.u32($0) }
        case .opaque(let packet):
            guard packet.countOrFormat < 32 else { throw .invalidField }
            (type, count) = (packet.packetType, Int(packet.countOrFormat))
            w.bytes(packet.body)
        }
        guard count < 32 else { throw .invalidField }
        output[0] = 0x80 | UInt8(count)
        output[1] = type
        output.storeBE16(UInt16(length / 4 - 1), at: 2)
        return length
    }
}

extension RTCPCompound {
    /// Serializes `packets` back to back into `output`; returns the byte count.
    public static func write(_ packets: [RTCPPacket], into output: UnsafeMutableRawBufferPointer) throws(RTCPError) -> Int {
        var offset = 0
        for packet in packets {
            offset += try packet.write(into: UnsafeMutableRawBufferPointer(rebasing: output[offset...]))
        }
        return offset
    }

    /// Convenience: serializes into a fresh array.
    public static func serialize(_ packets: [RTCPPacket]) throws(RTCPError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: packets.reduce(0) { $0 + $1.encodedLength })
        let result: Result<Int, RTCPError> = output.withUnsafeMutableBytes { buffer in
            do throws(RTCPError) { return .success(try write(packets, into: buffer)) } catch { return .failure(error) }
        }
        _ = try result.get()
        return output
    }
}

/// Sequential big-endian writer over a zeroed, pre-sized buffer.
struct Writer {
    let output: UnsafeMutableRawBufferPointer
    var offset: Int

    mutating func u8(_ value: UInt8) { output[offset] = value; offset += 1 }
    mutating func u16(_ value: UInt16) { output.storeBE16(value, at: offset); offset += 2 }
    mutating func u32(_ value: UInt32) { output.storeBE32(value, at: offset); offset += 4 }
    mutating func bytes(_ value: [UInt8]) { for byte in value { u8(byte) } }

    mutating func block(_ block: RTCPReportBlock) {
        u32(block.ssrc)
        u8(block.fractionLost)
        let clamped = min(max(block.cumulativeLost, -0x80_0000), 0x7F_FFFF)
        output.storeBE24(UInt32(bitPattern: clamped) & 0xFF_FFFF, at: offset)
        offset += 3
        u32(block.extendedHighestSequenceNumber)
        u32(block.jitter)
        u32(block.lastSenderReport)
        u32(block.delaySinceLastSenderReport)
    }
}
