import DTLS
import SDP

/// What the synthetic peer needs from the other side's description (an SFU answer or offer):
/// ICE credentials and candidates, the DTLS fingerprint and role, and per section the payload
/// types and announced SSRCs (to label what it receives).
public struct RemoteDescription: Sendable, Equatable {
    public struct Section: Sendable, Equatable {
        public var mid: String
        public var kind: MediaKind?
        public var direction: Direction
        public var rejected: Bool
        /// Payload type → codec for the codecs the peer handles (Opus, VP8).
        public var payloadTypes: [UInt8: PeerTrack.Codec]
        /// SSRCs announced with `a=ssrc` (RFC 5576).
        public var ssrcs: [UInt32]
        /// `a=msid` stream id, percent-decoded (`SDPToken`): the publishing member's
        /// `account/device` in SFU offers (sent as "account%2Fdevice"). Ids that do not
        /// decode are kept as written.
        public var streamID: String?
        /// RTX payload type → the payload type it repairs (`apt`, RFC 4588 §8.6).
        public var rtxPayloadTypes: [UInt8: UInt8] = [:]
        /// RTX SSRC → media SSRC, from `a=ssrc-group:FID media rtx` (RFC 4588 §8.7).
        public var rtxSSRCs: [UInt32: UInt32] = [:]
    }

    public var sdp: SessionDescription
    public var iceUfrag: String
    public var icePwd: String
    public var iceLite: Bool
    /// The SHA-256 fingerprint (RFC 8122; SHA-256 is what every WebRTC stack writes).
    public var fingerprint: DTLSFingerprint
    public var setup: DTLSSetup?
    /// Candidate attribute values (after "a=candidate:"), deduplicated across bundled sections.
    public var candidates: [String]
    public var sections: [Section]

    public init(parsing text: String) throws(PeerError) {
        let sdp: SessionDescription
        do { sdp = try SessionDescription(parsing: text) } catch { throw .invalidRemoteDescription("\(error)") }
        guard let first = sdp.media.first(where: { !$0.isRejected }) ?? sdp.media.first else {
            throw .invalidRemoteDescription("no media section")
        }
        guard let ufrag = sdp.iceUfrag(for: first), let pwd = sdp.icePwd(for: first) else {
            throw .invalidRemoteDescription("missing ice-ufrag/ice-pwd")
        }
        do {
            guard let fingerprint = try sdp.fingerprints(for: first).first(where: { $0.hashFunction.lowercased() == "sha-256" }) else {
                throw PeerError.invalidRemoteDescription("no sha-256 fingerprint")
            }
            self.fingerprint = DTLSFingerprint(algorithm: .sha256, bytes: fingerprint.bytes)
            setup = try sdp.setup(for: first)
            var candidates: [String] = []
            var sections: [Section] = []
            for (index, media) in sdp.media.enumerated() {
                guard let mid = media.mid else { throw PeerError.invalidRemoteDescription("section \(index) has no mid") }
                for candidate in try media.candidates() where !candidates.contains(candidate.attributeValue) {
                    candidates.append(candidate.attributeValue)
                }
                var payloadTypes: [UInt8: PeerTrack.Codec] = [:]
                for format in try media.payloadFormats() {
                    if PeerSDP.matches(format, .opus) { payloadTypes[format.payloadType] = .opus }
                    if PeerSDP.matches(format, .vp8) { payloadTypes[format.payloadType] = .vp8 }
                }
                var rtxPayloadTypes: [UInt8: UInt8] = [:]
                for format in try media.payloadFormats() {
                    if let apt = format.associatedPayloadType { rtxPayloadTypes[format.payloadType] = apt }
                }
                var rtxSSRCs: [UInt32: UInt32] = [:]
                for group in try media.ssrcGroups() where group.semantics == "FID" && group.ssrcs.count == 2 {
                    rtxSSRCs[group.ssrcs[1]] = group.ssrcs[0]
                }
                sections.append(Section(mid: mid, kind: media.kind, direction: media.direction, rejected: media.isRejected,
                                        payloadTypes: payloadTypes, ssrcs: try media.ssrcs(),
                                        streamID: try media.msids().first.map { SDPToken.unescape($0.streamID) ?? $0.streamID },
                                        rtxPayloadTypes: rtxPayloadTypes, rtxSSRCs: rtxSSRCs))
            }
            self.candidates = candidates
            self.sections = sections
        } catch let error as PeerError {
            throw error
        } catch {
            throw .invalidRemoteDescription("\(error)")
        }
        self.sdp = sdp
        iceUfrag = ufrag
        icePwd = pwd
        iceLite = sdp.iceLite
    }
}
