import CallCore
import Foundation
import IO
import Signaling

/// Ringing a group call (docs/protocol.md §9): a member rings accounts; every device of each
/// invitee rings; each invitee ends as accepted, declined, busy or noAnswer. Ring events are
/// durable (outbox), so a device that reconnects learns how its ring ended.
extension RoomCoordinator {
    enum RingState: String {
        case ringing, accepted, declined, busy, noAnswer, cancelled

        var isFinal: Bool { self != .ringing }
    }

    struct Ring {
        var state: RingState
        let inviter: DeviceKey
        let expiresAt: Int64
    }

    func ring(_ request: MediaRequest, room: String, invitees: [String]) {
        let inviter = request.device
        guard roomOf[inviter] == room else { return reject(request, room, "notInRoom", "join the room before ringing others") }
        let memberAccounts = Set(rooms[room, default: []].map(\.account))
        let expiresAt = now + hub.config.call.ringTimeout
        var outcome: [(String, RingState)] = []
        for account in Set(invitees).sorted() where account != inviter.account {
            if memberAccounts.contains(account) {
                outcome.append((account, .accepted))
                continue
            }
            if let existing = rings[room]?[account], existing.state == .ringing {
                outcome.append((account, .ringing))
                continue
            }
            let busy = hub.isInLiveCall(account) || roomOf.contains { $0.key.account == account && $0.value != room }
            let state: RingState = busy ? .busy : .ringing
            rings[room, default: [:]][account] = Ring(state: state, inviter: inviter, expiresAt: expiresAt)
            outcome.append((account, state))
            if state == .ringing {
                ringDevices(of: account, room: room, inviter: inviter, expiresAt: expiresAt)
                loop.schedule(afterMilliseconds: hub.config.call.ringTimeout) { [weak self] in
                    self?.finishRing(room: room, account: account, as: .noAnswer, onlyIfRinging: true)
                }
            }
            announce(room: room, account: account, state: state)
        }
        reply(request, RoomJSON.accepted(request, room: room, serverTime: now) { w in
            w.raw("invitees", "[" + outcome.map { account, state in
                var entry = JSONWriter()
                entry.field("account", account)
                entry.field("state", state.rawValue)
                return entry.finish()
            }.joined(separator: ",") + "]")
        })
    }

    func answerRing(_ request: MediaRequest, room: String, accept: Bool) {
        let account = request.device.account
        guard rings[room]?[account]?.state == .ringing else {
            return reject(request, room, "notRinging", "no ring for this account in this room")
        }
        finishRing(room: room, account: account, as: accept ? .accepted : .declined, onlyIfRinging: true)
        reply(request, RoomJSON.accepted(request, room: room, serverTime: now))
    }

    /// Joining a room one was rung for counts as accepting.
    func joinedAfterRing(_ member: DeviceKey, room: String) {
        finishRing(room: room, account: member.account, as: .accepted, onlyIfRinging: true)
    }

    /// A room that empties stops ringing its invitees.
    func roomEmptied(_ room: String) {
        for (account, ring) in rings[room, default: [:]] where ring.state == .ringing {
            finishRing(room: room, account: account, as: .cancelled, onlyIfRinging: true)
        }
        rings[room] = nil
    }

    func finishRing(room: String, account: String, as state: RingState, onlyIfRinging: Bool) {
        guard let ring = rings[room]?[account], !onlyIfRinging || ring.state == .ringing else { return }
        rings[room]?[account]?.state = state
        announce(room: room, account: account, state: state)
        if state == .cancelled || state == .noAnswer {
            for (device, online) in hub.devices(of: account) where !online {
                push(PushRequest(callID: room, device: device, body: Self.pushBody(type: "room.ended", room: room,
                                                                                    inviter: ring.inviter, device: device,
                                                                                    expiresAt: nil, reason: state.rawValue)))
            }
        }
    }

    private func ringDevices(of account: String, room: String, inviter: DeviceKey, expiresAt: Int64) {
        let payload = RoomJSON.event("room.incoming", room: room, serverTime: now) { w in
            w.raw("from", SnapshotJSON.device(inviter))
            w.field("expiresAt", expiresAt)
            w.raw("members", Self.membersJSON(rooms[room, default: []]))
        }
        let devices = hub.devices(of: account)
        carryOut(hub.deliverDurable(devices.map { ($0.device, payload) }, scope: "room/" + room, time: hubTime))
        for (device, online) in devices where !online {
            push(PushRequest(callID: room, device: device, body: Self.pushBody(type: "room.incoming", room: room, inviter: inviter,
                                                                                device: device, expiresAt: expiresAt, reason: nil)))
        }
    }

    /// `room.ringState` to the invitee's devices (so the others stop ringing) and to the
    /// room's members.
    private func announce(room: String, account: String, state: RingState) {
        let payload = RoomJSON.event("room.ringState", room: room, serverTime: now) { w in
            w.field("account", account)
            w.field("state", state.rawValue)
        }
        var recipients = hub.devices(of: account).map(\.device)
        recipients += rooms[room, default: []]
        carryOut(hub.deliverDurable(recipients.map { ($0, payload) }, scope: "room/" + room, time: hubTime))
    }

    var hubTime: HubTime { HubTime(wall: now, mono: EventLoop.monotonicMilliseconds()) }

    static func pushBody(type: String, room: String, inviter: DeviceKey, device: DeviceKey, expiresAt: Int64?, reason: String?) -> String {
        var w = JSONWriter()
        w.field("type", type)
        w.field("room", room)
        w.field("caller", inviter.account)
        w.field("callee", device.account)
        w.field("device", device.device)
        w.field("expiresAt", expiresAt)
        w.field("reason", reason)
        return w.finish()
    }
}
