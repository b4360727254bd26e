import Foundation
import SignalingClient

/// Drives a `SyntheticPeer` through a room over the IM channel (docs/protocol.md §9): joins,
/// publishes with `sfu.offer`, applies the server's answer, and answers server offers with
/// `sfu.answer`. The device is the polite side (W3C perfect negotiation): on `glare` it answers
/// the server's pending offer and then retries its own.
///
/// Blocking, like `SignalingClient`: call from a test or tool thread, never from the loop.
public final class RoomClient {
    public enum RoomError: Error, Equatable {
        /// The server rejected a command with this stable code (protocol.md §4, §9).
        case rejected(command: String, code: String)
        /// No result / transport failure (`SignalingClient.ClientError` text).
        case signaling(String)
        case peer(PeerError)
        /// A result that does not fit the command (e.g. an `sfu.offer` result without SDP).
        case unexpected(String)
        /// `glare` again after `maxGlareRetries` answered server offers.
        case glareNotResolved
    }

    /// 3: each glare is resolved by answering the server's one outstanding offer (the server
    /// keeps at most one per device), so repeated glare means the server keeps renegotiating.
    public static let maxGlareRetries = 3

    public let signaling: SignalingClient
    public let peer: SyntheticPeer
    public let room: String
    public private(set) var members: [String] = []
    /// Generation of the last server offer answered, or of the last accepted device offer.
    public private(set) var generation: Int64?
    /// Room events other than server offers, in arrival order (memberJoined/Left, ring states).
    public private(set) var events: [RoomMessages.Event] = []
    /// The SDP of the last server offer answered (what the device receives now).
    public private(set) var lastServerOffer: String?
    /// How many of our offers the server refused with `glare` (each answered, then retried).
    public private(set) var glareRefusals = 0

    public init(signaling: SignalingClient, peer: SyntheticPeer, room: String) throws(RoomError) {
        do { try RoomMessages.validate(room: room) } catch { throw .peer(error) }
        self.signaling = signaling
        self.peer = peer
        self.room = room
    }

    /// `room.join`; returns the members listed in the result.
    @discardableResult
    public func join(timeout: TimeInterval = 10) throws(RoomError) -> [String] {
        let command: RoomMessages.Command
        do { command = try RoomMessages.join(room: room) } catch { throw .peer(error) }
        switch try send(command, timeout: timeout) {
        case .accepted(let members):
            self.members = members
            return members
        case .answered, .duplicate: return members
        case .rejected(let code, _): throw .rejected(command: command.type, code: code)
        }
    }

    /// `sfu.offer` with the peer's offer, then applies the answer. On `glare`, answers the
    /// server's offer first and retries.
    public func publish(timeout: TimeInterval = 10) throws(RoomError) {
        for _ in 0...Self.maxGlareRetries {
            let offer: String
            let command: RoomMessages.Command
            do {
                offer = try peer.createOffer()
                command = try RoomMessages.offer(room: room, sdp: offer)
            } catch { throw .peer(error) }
            switch try send(command, timeout: timeout) {
            case .answered(let generation, let sdp):
                do { try peer.setRemoteAnswer(sdp) } catch { throw .peer(error) }
                if let generation { self.generation = generation }
                return
            case .rejected(let code, _) where code == "glare":
                // Polite: our offer is dropped (nothing was applied locally); answer theirs.
                glareRefusals += 1
                _ = try answerServerOffers(timeout: timeout)
            case .rejected(let code, _):
                throw .rejected(command: command.type, code: code)
            case .accepted, .duplicate:
                throw .unexpected("sfu.offer result without an answer")
            }
        }
        throw .glareNotResolved
    }

    /// Answers every queued server offer for this room (waiting up to `timeout` for the first
    /// one when none is queued; 0 = only what is queued). Returns how many were answered.
    @discardableResult
    public func answerServerOffers(timeout: TimeInterval = 0) throws(RoomError) -> Int {
        var answered = 0
        var wait = timeout
        while let frame = try? signaling.waitFor(timeout: wait, { [room] in
            $0.type == "sfu.offer" && $0["room"] as? String == room && $0.eventID == nil
        }) {
            wait = 0
            guard case .serverOffer(_, let generation, let sdp)? = RoomMessages.event(frame.object) else {
                throw .unexpected("malformed sfu.offer: \(frame.type)")
            }
            let answer: String
            let command: RoomMessages.Command
            do {
                answer = try peer.answer(remoteOffer: sdp)
                command = try RoomMessages.answer(room: room, generation: generation, sdp: answer)
            } catch { throw .peer(error) }
            switch try send(command, timeout: 10) {
            case .accepted, .answered, .duplicate:
                self.generation = generation
                lastServerOffer = sdp
                answered += 1
            case .rejected(let code, _) where code == "invalidGeneration":
                continue  // a newer offer is on its way; answer that one
            case .rejected(let code, _):
                throw .rejected(command: command.type, code: code)
            }
        }
        collectEvents()
        return answered
    }

    /// `sfu.preferences`: how large this device renders `publisher`'s ("account/device") video
    /// track `mid` (the publisher's mid), so the SFU forwards the lowest layer covering it,
    /// capped at `maxLayer` when given. Returns the server's outcome: `.accepted` or
    /// `.rejected(code:…)` (badSize, badLayer, notInRoom, unknownPublisher, unknownTrack).
    @discardableResult
    public func setPreferences(publisher: String, mid: String, maxWidth: Int, maxHeight: Int, maxLayer: Int? = nil,
                               timeout: TimeInterval = 10) throws(RoomError) -> RoomMessages.Outcome {
        let command: RoomMessages.Command
        do {
            command = try RoomMessages.preferences(room: room, .init(publisher: publisher, mid: mid, maxWidth: maxWidth,
                                                                     maxHeight: maxHeight, maxLayer: maxLayer))
        } catch { throw .peer(error) }
        return try send(command, timeout: timeout)
    }

    /// `room.leave`.
    public func leave(timeout: TimeInterval = 10) throws(RoomError) {
        let command: RoomMessages.Command
        do { command = try RoomMessages.leave(room: room) } catch { throw .peer(error) }
        if case .rejected(let code, _) = try send(command, timeout: timeout) {
            throw .rejected(command: command.type, code: code)
        }
    }

    /// Moves queued membership and ring events of this room into `events`.
    public func collectEvents() {
        while let frame = try? signaling.waitFor(timeout: 0, { [room] in
            $0["room"] as? String == room && $0.type.hasPrefix("room.")
        }) {
            if let event = RoomMessages.event(frame.object) { events.append(event) }
        }
    }

    private func send(_ command: RoomMessages.Command, timeout: TimeInterval) throws(RoomError) -> RoomMessages.Outcome {
        let frame: ServerFrame
        do { frame = try signaling.request(command.type, command.fields, timeout: timeout) } catch {
            throw .signaling("\(error)")
        }
        do { return try RoomMessages.outcome(ofResult: frame.object) } catch { throw .peer(error) }
    }
}
