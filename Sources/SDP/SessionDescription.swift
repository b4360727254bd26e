/// A session description (RFC 8866 §5), modelled line by line so that a parsed description
/// serializes back with every line, including attributes this module does not interpret.
///
/// Session-level lines are kept in the order RFC 8866 §5 prescribes (v o s i u e p c b t r z k a);
/// attributes keep their own order.
public struct SessionDescription: Sendable, Equatable, SDPAttributeContainer {
    /// `v=`; always 0 (RFC 8866 §5.1).
    public var version: Int
    public var origin: Origin
    /// `s=`; WebRTC stacks send `-`.
    public var sessionName: String
    public var information: String?
    public var uri: String?
    public var emails: [String]
    public var phones: [String]
    public var connection: Connection?
    public var bandwidths: [Bandwidth]
    public var timings: [Timing]
    /// `z=` value, verbatim.
    public var timeZones: String?
    /// `k=` value, verbatim (obsolete, RFC 8866 §5.12).
    public var encryptionKey: String?
    public var attributes: [SDPAttribute]
    public var media: [MediaDescription]

    public init(
        version: Int = 0, origin: Origin, sessionName: String = "-", information: String? = nil,
        uri: String? = nil, emails: [String] = [], phones: [String] = [], connection: Connection? = nil,
        bandwidths: [Bandwidth] = [], timings: [Timing] = [Timing()], timeZones: String? = nil,
        encryptionKey: String? = nil, attributes: [SDPAttribute] = [], media: [MediaDescription] = []
    ) {
        self.version = version
        self.origin = origin
        self.sessionName = sessionName
        self.information = information
        self.uri = uri
        self.emails = emails
        self.phones = phones
        self.connection = connection
        self.bandwidths = bandwidths
        self.timings = timings
        self.timeZones = timeZones
        self.encryptionKey = encryptionKey
        self.attributes = attributes
        self.media = media
    }

    /// The media section whose `a=mid` is `mid`.
    public func section(mid: String) -> MediaDescription? {
        media.first { $0.mid == mid }
    }
}

/// `o=<username> <sess-id> <sess-version> <nettype> <addrtype> <unicast-address>` (RFC 8866 §5.2).
/// The session id and version are kept as digit strings: Chromium sends 19-digit ids and RFC 8866
/// allows more than 64 bits.
public struct Origin: Sendable, Equatable {
    public var username: String
    public var sessionID: String
    public var sessionVersion: String
    public var networkType: String
    public var addressType: String
    public var address: String

    public init(
        username: String = "-", sessionID: String, sessionVersion: String, networkType: String = "IN",
        addressType: String = "IP4", address: String = "127.0.0.1"
    ) {
        self.username = username
        self.sessionID = sessionID
        self.sessionVersion = sessionVersion
        self.networkType = networkType
        self.addressType = addressType
        self.address = address
    }
}

/// `c=<nettype> <addrtype> <connection-address>` (RFC 8866 §5.7); the address keeps any
/// `/ttl/count` suffix verbatim.
public struct Connection: Sendable, Equatable {
    public var networkType: String
    public var addressType: String
    public var address: String

    public init(networkType: String = "IN", addressType: String = "IP4", address: String) {
        self.networkType = networkType
        self.addressType = addressType
        self.address = address
    }

    /// `c=` for an address, picking IP4 or IP6 by the presence of a colon.
    public init(address: String) {
        self.init(addressType: address.contains(":") ? "IP6" : "IP4", address: address)
    }
}

/// `b=<bwtype>:<bandwidth>` (RFC 8866 §5.8), e.g. `AS:2500` or `TIAS:2500000`.
public struct Bandwidth: Sendable, Equatable {
    public var type: String
    public var value: UInt64

    public init(type: String, value: UInt64) {
        self.type = type
        self.value = value
    }
}

/// `t=<start> <stop>` (RFC 8866 §5.9) with its `r=` lines, verbatim. WebRTC uses `t=0 0`.
public struct Timing: Sendable, Equatable {
    public var start: UInt64
    public var stop: UInt64
    public var repeats: [String]

    public init(start: UInt64 = 0, stop: UInt64 = 0, repeats: [String] = []) {
        self.start = start
        self.stop = stop
        self.repeats = repeats
    }
}
