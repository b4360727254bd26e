import CallCore
import Foundation
import Logging
import Storage

extension SignalingHub {
    /// The current state of a call: from the cache for live calls, else from the store.
    func loadState(_ callID: String) throws -> CallState? {
        if let cached = callCache[callID] { return cached }
        guard let stored = try store.loadCall(callID) else { return nil }
        let state = try CallStateCodec.decode(stored.state, descriptions: stored.descriptions)
        // A row written before schema 3 holds its SDP inline: its next write must store the
        // bodies apart even if they did not change, or they would be lost.
        if stored.descriptions.isEmpty, !CallDescriptions(state).isEmpty { descriptionsInline.insert(callID) }
        if !state.phase.isTerminal { callCache[callID] = state }
        return state
    }

    /// Persists one reducer step in one transaction (state, eventID record, outbox entries,
    /// deadlines), then sends the new outbox entries to the devices that are connected.
    /// `processed` is consumed: it moves into the commit (a borrowed one was copied there,
    /// a retain and a release of each of its strings per command). `first` (the command's
    /// result) leads the returned actions.
    ///
    /// The arrays are sized up front from the step's effects: grown from empty one element at
    /// a time they were reallocated ~4 times per command.
    func commit(_ step: CallStep, callID: String, prior: CallState?, processed: consuming ProcessedEvent?, time: HubTime,
                alsoCancel: [(callID: String, kind: String)] = [], first: HubAction? = nil) throws -> [HubAction] {
        var outbox: [(StoredDeviceKey, Data)] = []
        outbox.reserveCapacity(step.effects.count)
        var setDeadlines: [Deadline] = []
        var cancelDeadlines = alsoCancel
        var pushes: [HubAction] = []
        // One step often tells several devices the same thing (call.incoming to every callee
        // device, stopRinging to the losers): render each distinct notice once. A linear
        // search: a step has a handful of notices, and comparing two is far cheaper than
        // escaping a 3 KB SDP again.
        var rendered: [(notice: CallNotice, payload: Data)] = []
        rendered.reserveCapacity(step.effects.count)
        for effect in step.effects {
            switch effect {
            case .deliver(let device, let notice):
                let payload: Data
                if let hit = rendered.first(where: { $0.notice == notice }) {
                    payload = hit.payload
                } else {
                    payload = Data(NoticeJSON.render(notice, callID: callID, serverTime: time.wall,
                                                     snapshots: &snapshotJSON, sdps: &quotedSDPs))
                    rendered.append((notice, payload))
                }
                outbox.append((StoredDeviceKey(device), payload))
            case .scheduleDeadline(let kind, let at):
                setDeadlines.append(Deadline(callID: callID, kind: kind.rawValue, dueAt: at))
                cancelDeadlines.removeAll { $0.callID == callID && $0.kind == kind.rawValue }
            case .cancelDeadline(let kind):
                cancelDeadlines.append((callID, kind.rawValue))
            case .pushNotify(let device, let notice):
                let (pushCallID, body) = NoticeJSON.push(notice, callee: device)
                pushes.append(.push(PushRequest(callID: pushCallID, device: device, body: body)))
            }
        }
        var storedCall: StoredCall?
        var descriptionsChanged = true
        if let state = step.state, Self.state(state, differsFrom: prior) {
            var participants = [state.caller.account]
            if state.callee != state.caller.account { participants.append(state.callee) }
            // The SDP bodies go to their own row, written only when they change (invite,
            // answer, renegotiation) and deleted when the call ends (`init(storing:)`): the
            // call row is rewritten on every step. Unchanged bodies are not even encoded
            // (escaping 3–6 KB of SDP per step, ~1 % of the hub's CPU); the store ignores
            // `descriptions` when `descriptionsChanged` is false.
            if let prior, !descriptionsInline.contains(callID) {
                descriptionsChanged = CallDescriptions(storing: prior) != CallDescriptions(storing: state)
            }
            storedCall = StoredCall(callID: callID, revision: state.revision,
                                    state: CallStateCodec.encodeStateForStore(state),
                                    isTerminal: state.phase.isTerminal, participants: participants,
                                    createdAt: state.createdAt, updatedAt: time.wall,
                                    descriptions: descriptionsChanged
                                        ? CallDescriptions(storing: state).encoded(sdps: &quotedSDPs) : Data())
        }
        let wroteCall = storedCall != nil
        // Moved into the commit, not copied (each field retained and released again).
        let entries = try store.commit(StepCommit(callID: callID, expectedRevision: prior?.revision, call: consume storedCall,
                                                  processedEvent: consume processed, outbox: consume outbox,
                                                  setDeadlines: consume setDeadlines,
                                                  cancelDeadlines: consume cancelDeadlines, now: time.wall,
                                                  descriptionsChanged: descriptionsChanged))
        if let isTerminal = step.state?.phase.isTerminal {
            callCache[callID] = isTerminal ? nil : step.state
        }
        if wroteCall { descriptionsInline.remove(callID) }
        var actions: [HubAction] = []
        actions.reserveCapacity(1 + entries.count + pushes.count)
        if let first { actions.append(first) }
        for entry in entries {
            let device = DeviceKey(account: entry.device.account, device: entry.device.device)
            guard let connection = liveByDevice[device] else { continue }
            actions.append(.send(connection, frame(entry, for: device, time: time, live: true)))
            counters.eventsDelivered += 1
        }
        actions.append(contentsOf: pushes)
        return actions
    }

    /// `state != prior` without lifting `state` into an optional first: that copied the whole
    /// state (every string, array and dictionary retained) on every step, and compared through
    /// `Optional`'s generic copies of both sides. A changed step differs in `revision`, which
    /// the comparison reaches right after `callID`.
    static func state(_ state: CallState, differsFrom prior: CallState?) -> Bool {
        guard let prior else { return true }
        return state != prior
    }

    /// Renders a stored outbox entry for sending: splices in its seq and, for an incoming
    /// call, fresh TURN credentials. During a backlog replay (`live == false`) an incoming
    /// call that may no longer ring is delivered as ended (call-design §4 case 5).
    func frame(_ entry: OutboxEntry, for device: DeviceKey, time: HubTime, live: Bool) -> WireText {
        // Spliced from the stored bytes directly (``OutboxFrame/frameBytes(payload:seq:extra:)``).
        guard OutboxFrame.isIncoming(entry.payload) else {
            return WireText(utf8: OutboxFrame.frameBytes(payload: entry.payload, seq: entry.seq))
        }
        if !live, let callID = Self.callID(in: entry.payload), let state = try? loadState(callID) {
            switch deliveryView(of: state, for: device, now: time.wall, config: config.call) {
            case .ring, .notParticipant:
                break
            case .party:
                // The device answered this call before it lost the connection: never ring it again.
                return WireText(utf8: OutboxFrame.frameBytes(payload: entry.payload, seq: entry.seq, extra: "\"ring\":false"))
            case .elsewhere(let snapshot), .ended(let snapshot):
                return WireText(OutboxFrame.frame(payload: NoticeJSON.missed(snapshot, for: device, serverTime: time.wall),
                                                  seq: entry.seq))
            }
        }
        let turn = turnJSON(account: device.account, time: time).map { "\"turn\":" + $0 }
        return WireText(utf8: OutboxFrame.frameBytes(payload: entry.payload, seq: entry.seq, extra: turn))
    }

    /// Every outbox entry after `cursor`, in order.
    func replay(to device: DeviceKey, on id: ConnectionID, after cursor: Int64, time: HubTime) -> [HubAction] {
        var actions: [HubAction] = []
        var from = cursor
        do {
            while true {
                let page = try store.outbox(for: StoredDeviceKey(device), after: from, limit: config.backlogPageSize)
                for entry in page {
                    actions.append(.send(id, frame(entry, for: device, time: time, live: false)))
                    from = entry.seq
                }
                counters.eventsDelivered += page.count
                if page.count < config.backlogPageSize { break }
            }
        } catch {
            log.error("backlog read failed", ["account": .string(device.account), "device": .string(device.device),
                                              "error": .string("\(error)")])
        }
        return actions
    }

    /// A device that was offline at invite got a push instead of an outbox entry; when it
    /// connects while the call may still ring, it gets the invite now (not durable: it is
    /// derived from the call's current state on every connect, never from a countdown).
    func ringPushedCalls(for device: DeviceKey, on id: ConnectionID, time: HubTime) -> [HubAction] {
        var actions: [HubAction] = []
        do {
            for stored in try store.activeCalls(involving: device.account) {
                guard let state = try loadState(stored.callID), state.pushedDevices.contains(device),
                      case .ring(let snapshot, let offer) = deliveryView(of: state, for: device, now: time.wall, config: config.call)
                else { continue }
                var payload = NoticeJSON.render(.incomingCall(snapshot, offer: offer),
                                                callID: state.callID, serverTime: time.wall)
                if let turn = turnJSON(account: device.account, time: time) {
                    payload = OutboxFrame.prefix + "\"turn\":" + turn + "," + payload.dropFirst(OutboxFrame.prefix.count)
                }
                actions.append(.send(id, WireText(payload)))
            }
        } catch {
            log.error("active call lookup failed", ["account": .string(device.account), "error": .string("\(error)")])
        }
        return actions
    }

    private struct CallIDOnly: Decodable { var callID: String }

    static func callID(in payload: Data) -> String? {
        try? JSONDecoder().decode(CallIDOnly.self, from: payload).callID
    }
}
