import SDP

/// SDP offers (RFC 8866) through `SessionDescription(parsing:)` and `SFUAnswerBuilder`.
/// Invariants: a parsed description serializes to text that parses back to an equal
/// description; an answer the builder produces re-parses to its own description and passes
/// `validateWebRTCAttributes` (the SFU never sends an answer it would itself reject).
enum SDPFuzz {
    /// Same shape as the SDP tests' server transport (SHA-256 fingerprint, one host candidate).
    static let builder = SFUAnswerBuilder(
        transport: SFUTransportParameters(
            iceUfrag: "sfu1", icePwd: "0123456789abcdefghijkl",
            fingerprint: Fingerprint(hashFunction: "sha-256", bytes: (0..<32).map { UInt8($0 * 7 & 0xFF) }),
            address: "127.0.0.1", port: 40000),
        sessionID: "4611731400430051336", sessionVersion: 2)

    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let offer = try? SessionDescription(parsing: text) else { return }
        FuzzCounters.hit("sdp.parsed")
        let serialized = offer.serialized
        let reparsed: SessionDescription
        do { reparsed = try SessionDescription(parsing: serialized) } catch {
            throw .invariant("serialized description does not parse: \(error)")
        }
        try expect(reparsed == offer, "parse(serialize(d)) != d")
        _ = try? offer.groups()
        for section in offer.media {
            _ = try? offer.fingerprints(for: section)
            _ = try? offer.setup(for: section)
            _ = try? offer.headerExtensions(for: section)
            _ = offer.iceOptions(for: section)
        }
        guard let answer = try? builder.answer(to: offer) else { return }
        FuzzCounters.hit("sdp.answered")
        let parsedAnswer: SessionDescription
        do { parsedAnswer = try SessionDescription(parsing: answer.sdp) } catch {
            throw .invariant("the SFU's answer does not parse: \(error)")
        }
        try expect(parsedAnswer == answer.description, "the SFU's answer does not round-trip")
        do { try parsedAnswer.validateWebRTCAttributes() } catch {
            throw .invariant("the SFU's answer fails its own WebRTC validation: \(error)")
        }
        try expect(parsedAnswer.media.count == offer.media.count, "answer has \(parsedAnswer.media.count) sections for \(offer.media.count) offered")
    }
}
