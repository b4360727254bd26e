/// Something that happened to one call, named after what happened. The host authenticates
/// the device, dedups eventIDs and routes by callID before calling ``reduce(_:_:now:config:)``.
public enum CallEvent: Codable, Sendable, Equatable {
    /// A caller device places a call.
    case invite(CallInvite)
    /// A callee device reports that its UI rings.
    case ringing(device: DeviceKey)
    /// A callee device answers, with the revision it saw while ringing and, usually, its SDP
    /// answer to the invite's offer (generation 1).
    case answer(device: DeviceKey, seenRevision: Int64, sdp: SessionDescription?)
    /// A callee device declines, with the revision it saw while ringing.
    case decline(device: DeviceKey, seenRevision: Int64)
    /// The caller device gives up while ringing.
    case cancel(device: DeviceKey)
    /// The caller device or the winner ends the call.
    case hangup(device: DeviceKey)
    /// A party offers a new description; `generation` is the latest generation it has seen.
    case sdpOffer(device: DeviceKey, generation: Int64, sdp: SessionDescription)
    /// A party answers the pending offer of `generation`.
    case sdpAnswer(device: DeviceKey, generation: Int64, sdp: SessionDescription)
    /// A device trickles a candidate of negotiation `generation`.
    case iceCandidate(device: DeviceKey, generation: Int64, candidate: IceCandidate)
    /// A party reports media reached a talkable state.
    case mediaConnected(device: DeviceKey)
    /// A party reports the media path is lost.
    case mediaLost(device: DeviceKey)
    /// A deadline stored in ``CallState/deadlines`` came due (the host fires it at or after
    /// its time, also after a restart).
    case deadlineFired(DeadlineKind)
}

/// Payload of ``CallEvent/invite(_:)``.
public struct CallInvite: Codable, Sendable, Equatable {
    public var callID: String
    public var caller: DeviceKey
    public var callee: String
    /// The callee's registered devices and whether each has a live connection now.
    public var calleeDevices: [String: Bool]
    /// The caller's other registered devices (the calling device is ignored if listed).
    public var callerOtherDevices: [String]
    /// The caller's offer; becomes negotiation generation 1.
    public var offer: SessionDescription?
    public var context: InviteContext
    /// P2P or through the SFU; with `sfu` the invite carries no offer.
    public var media: CallMedia

    public init(
        callID: String, caller: DeviceKey, callee: String, calleeDevices: [String: Bool],
        callerOtherDevices: [String] = [], offer: SessionDescription? = nil, context: InviteContext = InviteContext(),
        media: CallMedia = .p2p
    ) {
        self.media = media
        self.callID = callID
        self.caller = caller
        self.callee = callee
        self.calleeDevices = calleeDevices
        self.callerOtherDevices = callerOtherDevices
        self.offer = offer
        self.context = context
    }
}

/// Cross-call facts the host computes from its store, so the reducer stays per call.
public struct InviteContext: Codable, Sendable, Equatable {
    /// The callee account is a party (caller, or answered callee) of another non-terminal
    /// call. Call waiting is off: the new call ends `busy` at once (§4 case 11).
    public var calleeBusy: Bool
    /// A call from the callee account to the caller account that is still ringing (§4 case 1).
    public var glareCallID: String?

    public init(calleeBusy: Bool = false, glareCallID: String? = nil) {
        self.calleeBusy = calleeBusy
        self.glareCallID = glareCallID
    }
}
