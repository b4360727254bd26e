/// One media section: `m=<media> <port>[/<number of ports>] <proto> <fmt> ...` and the lines
/// under it (RFC 8866 §5.14): `i=`, `c=`, `b=`, `k=`, `a=`.
public struct MediaDescription: Sendable, Equatable, SDPAttributeContainer {
    /// `audio`, `video`, `application`, ... kept verbatim.
    public var media: String
    /// 0 rejects the section (RFC 3264 §6).
    public var port: UInt16
    public var numberOfPorts: Int?
    /// e.g. `UDP/TLS/RTP/SAVPF` (RFC 5764) or `UDP/DTLS/SCTP` (RFC 8841).
    public var proto: String
    /// Payload types for RTP profiles, other tokens otherwise (e.g. `webrtc-datachannel`).
    public var formats: [String]
    public var information: String?
    public var connections: [Connection]
    public var bandwidths: [Bandwidth]
    public var encryptionKey: String?
    public var attributes: [SDPAttribute]

    public init(
        media: String, port: UInt16, numberOfPorts: Int? = nil, proto: String, formats: [String],
        information: String? = nil, connections: [Connection] = [], bandwidths: [Bandwidth] = [],
        encryptionKey: String? = nil, attributes: [SDPAttribute] = []
    ) {
        self.media = media
        self.port = port
        self.numberOfPorts = numberOfPorts
        self.proto = proto
        self.formats = formats
        self.information = information
        self.connections = connections
        self.bandwidths = bandwidths
        self.encryptionKey = encryptionKey
        self.attributes = attributes
    }

    /// Known media kinds; nil for anything else.
    public var kind: MediaKind? { MediaKind(rawValue: media) }

    /// Whether the section is rejected or disabled (port 0, RFC 3264 §6 / RFC 8843 §7.3.3).
    public var isRejected: Bool { port == 0 }
}

/// The media types the SFU handles.
public enum MediaKind: String, Sendable, Hashable, CaseIterable {
    case audio
    case video
    case application
}
