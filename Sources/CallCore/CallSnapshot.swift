/// What devices see of a call: ``CallState`` without SDP, ICE credentials or candidate
/// buffers. Sent with notices and attached by the host to rejections (§4 case 9).
public struct CallSnapshot: Codable, Sendable, Equatable {
    public var callID: String
    public var revision: Int64
    public var phase: CallPhase
    public var caller: DeviceKey
    public var callee: String
    /// Every participating device, sorted by ``DeviceKey``.
    public var devices: [DeviceEntry]
    public var answeredBy: DeviceKey?
    public var endReason: CallEndReason?
    public var endedBy: DeviceKey?
    public var createdAt: Int64
    public var endedAt: Int64?
    public var deadlines: CallDeadlines
    /// The current negotiation generation.
    public var generation: Int64
    public var media: CallMedia

    public init(
        callID: String, revision: Int64, phase: CallPhase, caller: DeviceKey, callee: String,
        devices: [DeviceEntry], answeredBy: DeviceKey?, endReason: CallEndReason?, endedBy: DeviceKey?,
        createdAt: Int64, endedAt: Int64?, deadlines: CallDeadlines, generation: Int64,
        media: CallMedia = .p2p
    ) {
        self.media = media
        self.callID = callID
        self.revision = revision
        self.phase = phase
        self.caller = caller
        self.callee = callee
        self.devices = devices
        self.answeredBy = answeredBy
        self.endReason = endReason
        self.endedBy = endedBy
        self.createdAt = createdAt
        self.endedAt = endedAt
        self.deadlines = deadlines
        self.generation = generation
    }

    public func participation(of device: DeviceKey) -> DeviceParticipation? {
        devices.first { $0.device == device }?.participation
    }
}

/// One row of ``CallSnapshot/devices``.
public struct DeviceEntry: Codable, Sendable, Equatable {
    public var device: DeviceKey
    public var participation: DeviceParticipation

    public init(device: DeviceKey, participation: DeviceParticipation) {
        self.device = device
        self.participation = participation
    }
}
