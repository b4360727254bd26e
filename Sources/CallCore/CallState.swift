/// The server-approved state of one 1:1 call: what the host persists after each accepted
/// event (call-design §3). Times are server wall-clock Unix epoch milliseconds.
public struct CallState: Codable, Sendable, Equatable {
    public var callID: String
    /// Server-approved version; +1 on every accepted change (call-design §1).
    public var revision: Int64
    /// The revision at which `phase` (and with it `answeredBy`) last changed. Answers and
    /// declines are compare-and-set against it: a device may answer with any revision it saw
    /// since the call started ringing (ringing acknowledgements of other devices do not make
    /// its view stale), but not with one from before the last phase change.
    public var phaseRevision: Int64
    public var phase: CallPhase
    /// The device that placed the call.
    public var caller: DeviceKey
    /// The callee account (1:1).
    public var callee: String
    /// Every device taking part: the caller device, the caller's other devices and the callee's
    /// devices.
    public var participation: [DeviceKey: DeviceParticipation]
    /// Callee devices that were offline at invite and got a push instead of a delivery.
    public var pushedDevices: Set<DeviceKey>
    /// The callee device whose answer the server accepted.
    public var answeredBy: DeviceKey?
    public var endReason: CallEndReason?
    /// The device whose command ended the call; nil for deadlines and busy.
    public var endedBy: DeviceKey?
    public var createdAt: Int64
    public var endedAt: Int64?
    public var deadlines: CallDeadlines
    public var negotiation: Negotiation
    public var media: CallMedia

    public init(
        callID: String,
        revision: Int64,
        phaseRevision: Int64,
        phase: CallPhase,
        caller: DeviceKey,
        callee: String,
        participation: [DeviceKey: DeviceParticipation],
        pushedDevices: Set<DeviceKey> = [],
        answeredBy: DeviceKey? = nil,
        endReason: CallEndReason? = nil,
        endedBy: DeviceKey? = nil,
        createdAt: Int64,
        endedAt: Int64? = nil,
        deadlines: CallDeadlines = CallDeadlines(),
        negotiation: Negotiation = Negotiation(),
        media: CallMedia = .p2p
    ) {
        self.media = media
        self.callID = callID
        self.revision = revision
        self.phaseRevision = phaseRevision
        self.phase = phase
        self.caller = caller
        self.callee = callee
        self.participation = participation
        self.pushedDevices = pushedDevices
        self.answeredBy = answeredBy
        self.endReason = endReason
        self.endedBy = endedBy
        self.createdAt = createdAt
        self.endedAt = endedAt
        self.deadlines = deadlines
        self.negotiation = negotiation
    }

    /// The caller's devices other than the calling one, sorted.
    public var callerOtherDevices: [DeviceKey] {
        participation.keys.filter { $0.account == caller.account && $0 != caller }.sorted()
    }

    /// The callee's devices, sorted.
    public var calleeDevices: [DeviceKey] {
        participation.keys.filter { $0.account == callee }.sorted()
    }

    /// Which side a participating device is on, or nil for strangers.
    public func side(of device: DeviceKey) -> CallSide? {
        guard participation[device] != nil else { return nil }
        return device.account == caller.account ? .caller : .callee
    }

    /// The device that currently speaks for `side` in negotiation: the caller device, or the
    /// winner once answered.
    public func party(_ side: CallSide) -> DeviceKey? {
        side == .caller ? caller : answeredBy
    }

    /// Until when a callee device may start ringing: the ring deadline or
    /// `createdAt + inviteLifetime − deliveryGrace`, whichever is earlier (§4 case 5).
    public func ringsUntil(config: CallConfig) -> Int64 {
        min(createdAt + config.ringTimeout, createdAt + config.inviteLifetime - config.deliveryGrace)
    }

    /// When the host may delete this terminal call (its tombstone); nil while not terminal.
    public func tombstoneExpiry(config: CallConfig) -> Int64? {
        guard phase.isTerminal, let endedAt else { return nil }
        return endedAt + config.tombstoneRetention
    }

    /// The device-facing view without SDP or candidate buffers.
    public var snapshot: CallSnapshot {
        // Filled and sorted in place: `map` then `sorted` made a second array and released
        // the first, ~30 % of this getter, which runs for every result and every notice.
        var devices: [DeviceEntry] = []
        devices.reserveCapacity(participation.count)
        for (device, participation) in participation {
            devices.append(DeviceEntry(device: device, participation: participation))
        }
        devices.sort { $0.device < $1.device }
        return CallSnapshot(
            callID: callID,
            revision: revision,
            phase: phase,
            caller: caller,
            callee: callee,
            devices: devices,
            answeredBy: answeredBy,
            endReason: endReason,
            endedBy: endedBy,
            createdAt: createdAt,
            endedAt: endedAt,
            deadlines: deadlines,
            generation: negotiation.generation,
            media: media
        )
    }
}
