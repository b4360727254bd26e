import RTP

/// transport-cc feedback bodies (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1).
/// Invariants: a decoded body re-encodes; decoding the encoding gives the same feedback;
/// one result per reported packet with consecutive sequence numbers; wrapped in an RTPFB
/// FMT 15 packet it survives an RTCP serialize/parse round trip.
enum TransportFeedbackFuzz {
    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        guard let feedback = try? TransportFeedback(body: bytes) else { return }
        FuzzCounters.hit("transport-cc.parsed")
        let results = feedback.packetResults
        try expect(results.count == feedback.receiveDeltas.count, "packetResults count")
        for (index, result) in results.enumerated() {
            try expect(result.sequenceNumber == feedback.baseSequenceNumber &+ UInt16(truncatingIfNeeded: index), "sequence numbers not consecutive")
            try expect((result.arrivalMicros == nil) == (feedback.receiveDeltas[index] == nil), "arrival present without delta")
        }
        let body: [UInt8]
        do { body = try feedback.encodedBody() } catch { throw .invariant("decoded feedback does not encode: \(error)") }
        let again: TransportFeedback
        do { again = try TransportFeedback(body: body) } catch { throw .invariant("encoded feedback does not decode: \(error)") }
        try expect(again == feedback, "encode/decode round trip changed the feedback")
        do {
            let packet = try RTCPTransportFeedback(senderSSRC: 1, mediaSSRC: 2, feedback: feedback)
            let wire = try RTCPCompound.serialize([.transportFeedback(packet)])
            guard case .transportFeedback(let parsed)? = try RTCPCompound.parse(wire).first else {
                throw FuzzFailure.invariant("RTPFB FMT 15 did not parse back as transport feedback")
            }
            try expect(try parsed.decoded() == feedback, "RTCP round trip changed the feedback")
        } catch let failure as FuzzFailure {
            throw failure
        } catch {
            throw .invariant("RTCP wrapping failed: \(error)")
        }
    }
}
