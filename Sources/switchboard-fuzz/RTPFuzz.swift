import RTP

/// RTP (RFC 3550 §5.1, RFC 8285 extensions): `RTPPacketView` on any bytes, then the
/// in-place `RTPPacketRewriter` writes on a copy.
/// Invariants: every range the view reports lies inside the packet and they tile it
/// (header ‖ payload ‖ padding); extension elements lie inside the extension block;
/// rewriting header fields and extension values keeps the packet parseable with the same
/// layout, reads back what was written, and changes no other byte.
enum RTPFuzz {
    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        let result: Result<Void, FuzzFailure> = bytes.withUnsafeBytes { buffer in
            do throws(FuzzFailure) { try check(buffer, bytes) } catch { return .failure(error) }
            return .success(())
        }
        try result.get()
    }

    private static func check(_ buffer: UnsafeRawBufferPointer, _ bytes: [UInt8]) throws(FuzzFailure) {
        guard let view = try? RTPPacketView(buffer) else { return }
        FuzzCounters.hit("rtp.parsed")
        if view.hasExtension { FuzzCounters.hit("rtp.extension") }
        let fixed = 12 + 4 * view.csrcCount
        try expect(view.version == 2, "parsed a version \(view.version) packet")
        try expect(view.headerLength >= fixed, "header \(view.headerLength) shorter than fixed+CSRC \(fixed)")
        try expect(view.payloadRange.upperBound + view.paddingLength == buffer.count, "header+payload+padding != packet length")
        try expect(view.payloadRange.lowerBound <= view.payloadRange.upperBound, "negative payload")
        try expect(view.hasPadding == (view.paddingLength > 0), "padding length without P bit or P bit with 0")
        try expect(view.csrcs.count == view.csrcCount, "CSRC list length")
        let ext = view.extensionDataRange
        if view.hasExtension {
            try expect(ext.lowerBound == fixed + 4 && ext.upperBound == view.headerLength, "extension block not where the header says")
        } else {
            try expect(ext.isEmpty && view.headerLength == fixed, "extension range without X bit")
        }
        var elements: [RTPHeaderExtensionElement] = []
        for element in view.headerExtensions {
            try expect(element.valueRange.lowerBound >= ext.lowerBound && element.valueRange.upperBound <= ext.upperBound,
                       "extension element \(element.id) at \(element.valueRange) outside \(ext)")
            elements.append(element)
            if elements.count > ext.count + 1 { throw .invariant("extension walk does not terminate") }
        }
        for element in elements {
            try expect(view.extensionValueRange(id: element.id) == elements.first { $0.id == element.id }?.valueRange,
                       "lookup of id \(element.id) disagrees with the walk")
        }
        // Transport-wide sequence number (2- or 4-byte value only) under present and absent ids.
        for id in elements.map(\.id) + [0, 15, 255] {
            if let range = view.extensionValueRange(id: id), view.transportWideSequenceNumber(extensionID: id) != nil {
                try expect(range.count == 2 || range.count == 4, "transport-wide sequence number read from a \(range.count)-byte value")
            }
        }
        try rewrite(bytes, original: view, elements: elements)
    }

    private static func rewrite(_ bytes: [UInt8], original: RTPPacketView, elements: [RTPHeaderExtensionElement]) throws(FuzzFailure) {
        var copy = bytes
        let ssrc = ~original.ssrc, seq = ~original.sequenceNumber, ts = original.timestamp &+ 1
        let pt = (original.payloadType &+ 1) & 0x7F, marker = !original.marker
        let result: Result<Void, FuzzFailure> = copy.withUnsafeMutableBytes { packet in
            do throws(FuzzFailure) {
                do throws(RTPError) {
                    try RTPPacketRewriter.setSSRC(ssrc, in: packet)
                    try RTPPacketRewriter.setSequenceNumber(seq, in: packet)
                    try RTPPacketRewriter.setTimestamp(ts, in: packet)
                    try RTPPacketRewriter.setPayloadType(pt, in: packet)
                    try RTPPacketRewriter.setMarker(marker, in: packet)
                    for element in elements where original.extensionValueRange(id: element.id) == element.valueRange {
                        let value = (element.valueRange).map { ~bytes[$0] }
                        try RTPPacketRewriter.replaceExtensionValue(id: element.id, with: value, in: packet)
                    }
                } catch {
                    throw FuzzFailure.invariant("rewriting a parsed packet failed: \(error)")
                }
                let view: RTPPacketView
                do { view = try RTPPacketView(UnsafeRawBufferPointer(packet)) } catch {
                    throw FuzzFailure.invariant("rewritten packet no longer parses: \(error)")
                }
                try expect(view.payloadRange == original.payloadRange && view.extensionDataRange == original.extensionDataRange,
                           "rewrite moved the payload or extension block")
                try expect(view.ssrc == ssrc && view.sequenceNumber == seq && view.timestamp == ts
                           && view.payloadType == pt && view.marker == marker, "rewritten header fields do not read back")
                return .success(())
            } catch { return .failure(error) }
        }
        try result.get()
        // Only the rewritten bytes may differ.
        var touched = Set(1..<12)
        for element in elements where original.extensionValueRange(id: element.id) == element.valueRange {
            touched.formUnion(element.valueRange)
        }
        for index in bytes.indices where !touched.contains(index) && bytes[index] != copy[index] {
            throw .invariant("rewrite changed byte \(index) it does not own")
        }
        if copy[0] != bytes[0] { throw .invariant("rewrite changed the first octet") }
    }
}

