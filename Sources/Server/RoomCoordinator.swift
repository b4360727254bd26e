import CallCore
import Foundation
import IO
import Logging
import Signaling

/// Room membership and SFU negotiation for devices (docs/protocol.md §9). Lives on the
/// signaling loop; talks to the media plane asynchronously and answers devices through the
/// hub's connection table. Membership is live-session state, kept in memory: a restart ends
/// every media session anyway.
final class RoomCoordinator {
    let loop: EventLoop
    let hub: SignalingHub
    /// Nil when the server runs without a media plane: membership works, negotiation is
    /// refused with `mediaUnavailable`.
    let media: MediaPlane?
    let log: Logger
    /// Grace after a device's WebSocket drops before it leaves its room: media may go on
    /// while signaling reconnects (call-design §6). 45 s = the idle timeout.
    let disconnectGraceMs: Int64
    private(set) var rooms: [String: Set<DeviceKey>] = [:]
    private(set) var roomOf: [DeviceKey: String] = [:]
    /// Pending and finished rings per room and invitee account.
    var rings: [String: [String: Ring]] = [:]
    var send: (ConnectionID, String) -> Void = { _, _ in }
    var carryOut: ([HubAction]) -> Void = { _ in }
    var push: (PushRequest) -> Void = { _ in }

    init(loop: EventLoop, hub: SignalingHub, media: MediaPlane?, log: Logger, disconnectGraceMs: Int64) {
        self.loop = loop
        self.hub = hub
        self.media = media
        self.log = log
        self.disconnectGraceMs = disconnectGraceMs
        media?.setCallbacks(
            onOffer: { [weak self] member, generation, sdp in
                self?.loop.execute { self?.serverOffer(to: member, generation: generation, sdp: sdp) }
            },
            onMemberLeft: { [weak self] member, reason in
                self?.loop.execute { self?.remove(member, reason: reason, tellMedia: false) }
            },
            onActiveSpeaker: { [weak self] room, member in
                self?.loop.execute { self?.announceSpeaker(room: room, member: member) }
            })
    }

    var now: Int64 { EventLoop.wallClockMilliseconds() }

    func handle(_ request: MediaRequest) {
        guard let room = request.kind.room else { return }
        let member = request.device
        switch request.kind {
        case .roomJoin:
            if hub.roomAccess(room, for: member) == .denied {
                return reject(request, room, "notParticipant", "this room belongs to a call you are not a party of")
            }
            if let current = roomOf[member], current != room { remove(member, reason: "left", tellMedia: true) }
            let others = rooms[room, default: []].subtracting([member])
            rooms[room, default: []].insert(member)
            roomOf[member] = room
            reply(request, RoomJSON.accepted(request, room: room, serverTime: now) { w in
                w.raw("members", Self.membersJSON(others))
            })
            broadcast(room, except: member, type: "room.memberJoined", member: member, reason: nil)
            joinedAfterRing(member, room: room)
            log.info("room joined", ["room": .string(room), "account": .string(member.account),
                                     "device": .string(member.device), "members": .int(Int64(others.count + 1))])
        case .roomLeave:
            guard roomOf[member] == room else { return reject(request, room, "notInRoom", "not a member of this room") }
            remove(member, reason: "left", tellMedia: true)
            reply(request, RoomJSON.accepted(request, room: room, serverTime: now))
        case .sfuOffer(_, let sdp):
            guard roomOf[member] == room else { return reject(request, room, "notInRoom", "join the room first") }
            guard let media else { return reject(request, room, "mediaUnavailable", "this server runs without a media plane") }
            media.join(room: room, member: member, offer: sdp) { [weak self] result in
                self?.loop.execute {
                    guard let self else { return }
                    switch result {
                    case .success(let answer):
                        self.reply(request, RoomJSON.accepted(request, room: room, serverTime: self.now) { w in
                            w.field("generation", answer.generation)
                            w.field("sdp", answer.sdp)
                        })
                    case .failure(let error):
                        self.reject(request, room, error.code, error.message)
                    }
                }
            }
        case .sfuAnswer(_, let generation, let sdp):
            guard roomOf[member] == room else { return reject(request, room, "notInRoom", "join the room first") }
            guard let media else { return reject(request, room, "mediaUnavailable", "this server runs without a media plane") }
            media.applyAnswer(member: member, generation: generation, sdp: sdp) { [weak self] result in
                self?.loop.execute {
                    guard let self else { return }
                    switch result {
                    case .success: self.reply(request, RoomJSON.accepted(request, room: room, serverTime: self.now))
                    case .failure(let error): self.reject(request, room, error.code, error.message)
                    }
                }
            }
        case .roomRing(_, let invitees):
            ring(request, room: room, invitees: invitees)
        case .roomAccept:
            answerRing(request, room: room, accept: true)
        case .roomDecline:
            answerRing(request, room: room, accept: false)
        case .sfuPreferences(_, let preferences):
            setPreferences(request, room: room, preferences)
        default:
            break
        }
    }

    /// The device's WebSocket closed: leave after a grace unless it came back.
    func deviceDisconnected(_ member: DeviceKey) {
        guard roomOf[member] != nil else { return }
        loop.schedule(afterMilliseconds: disconnectGraceMs) { [weak self] in
            guard let self, self.roomOf[member] != nil, self.hub.connection(for: member) == nil else { return }
            self.remove(member, reason: "disconnected", tellMedia: true)
        }
    }

    /// `room.activeSpeaker` (transient) to every member: the smoothed dominant speaker from
    /// the SFU's audio levels, null when nobody speaks.
    private func announceSpeaker(room: String, member: DeviceKey?) {
        let text = RoomJSON.event("room.activeSpeaker", room: room, serverTime: now) { w in
            if let member { w.raw("member", SnapshotJSON.device(member)) } else { w.null("member") }
        }
        for other in rooms[room, default: []] {
            if let connection = hub.connection(for: other) { send(connection, text) }
        }
    }

    private func serverOffer(to member: DeviceKey, generation: Int64, sdp: String) {
        guard let room = roomOf[member], let connection = hub.connection(for: member) else { return }
        send(connection, RoomJSON.event("sfu.offer", room: room, serverTime: now) { w in
            w.field("generation", generation)
            w.field("sdp", sdp)
        })
    }

    private func remove(_ member: DeviceKey, reason: String, tellMedia: Bool) {
        guard let room = roomOf.removeValue(forKey: member) else { return }
        rooms[room]?.remove(member)
        if rooms[room]?.isEmpty == true {
            rooms[room] = nil
            roomEmptied(room)
        }
        if tellMedia { media?.leave(member: member) }
        broadcast(room, except: member, type: "room.memberLeft", member: member, reason: reason)
        log.info("room left", ["room": .string(room), "account": .string(member.account),
                               "device": .string(member.device), "reason": .string(reason)])
    }

    private func broadcast(_ room: String, except: DeviceKey, type: String, member: DeviceKey, reason: String?) {
        let text = RoomJSON.event(type, room: room, serverTime: now) { w in
            w.raw("member", SnapshotJSON.device(member))
            w.field("reason", reason)
        }
        for other in rooms[room, default: []] where other != except {
            if let connection = hub.connection(for: other) { send(connection, text) }
        }
    }

    func reply(_ request: MediaRequest, _ text: String) {
        // The request's connection may have been replaced meanwhile: answer the live one.
        if let connection = hub.connection(for: request.device) { send(connection, text) }
    }

    func reject(_ request: MediaRequest, _ room: String, _ code: String, _ message: String) {
        reply(request, RoomJSON.rejected(request, room: room, code: code, message: message, serverTime: now))
    }

    static func membersJSON(_ members: Set<DeviceKey>) -> String {
        "[" + members.sorted().map(SnapshotJSON.device).joined(separator: ",") + "]"
    }
}
