import Auth
import CallCore
import Foundation
import Logging
import Storage

extension SignalingHub {
    /// A command from an authenticated device: rate limit, dedup, reduce, commit, deliver.
    func handle(_ command: ClientCommand, from device: DeviceKey, on id: ConnectionID, time: HubTime) -> [HubAction] {
        counters.commands += 1
        guard connections[id]?.bucket.take(now: time.mono) == true else {
            counters.rateLimited += 1
            // Not recorded: the device may retry the same eventID once under the limit.
            return [.send(id, WireText(ResultJSON.rejected(command, code: "rateLimited",
                                                           message: "over \(Int(config.commandsPerSecond)) commands per second",
                                                           snapshot: nil, serverTime: time.wall)))]
        }
        if case .get(let callID) = command.kind {
            return [.send(id, WireText(get(callID, command: command, device: device, time: time)))]
        }
        if let room = command.kind.room {
            let request = MediaRequest(connection: id, device: device, eventID: command.eventID, kind: command.kind)
            if case .sfuPreferences(_, let preferences) = command.kind, let problem = preferences.problem {
                return [.send(id, WireText(RoomJSON.rejected(request, room: room, code: problem.code, message: problem.message,
                                                             serverTime: time.wall)))]
            }
            return [.media(request)]
        }
        do {
            // No lookup of the eventID first: the step's commit inserts the processed-event
            // row before anything else and throws `duplicateEvent` (writing nothing) when it
            // exists, so a retry is answered below from the stored result. One indexed
            // SELECT fewer for every command that is not a retry (nearly all).
            for _ in 0..<3 {
                do {
                    return try apply(command, from: device, on: id, time: time)
                } catch StorageError.revisionConflict {
                    // Another writer (another process) moved the call: reload and decide again.
                    counters.revisionConflicts += 1
                    if let callID = command.callID { callCache[callID] = nil }
                } catch StorageError.duplicateEvent {
                    if let first = try store.processedEvent(account: device.account, device: device.device, eventID: command.eventID) {
                        return [.send(id, WireText(duplicate(of: first, command: command, time: time)))]
                    }
                }
            }
            return [.send(id, WireText(ResultJSON.rejected(command, code: "internal", message: "conflict persisted; retry",
                                                           snapshot: nil, serverTime: time.wall)))]
        } catch {
            log.error("command failed", ["eventID": .string(command.eventID), "type": .string(command.kind.wireType),
                                         "error": .string("\(error)")])
            if let callID = command.callID { callCache[callID] = nil }
            return [.send(id, WireText(ResultJSON.rejected(command, code: "internal", message: "storage failure; nothing was applied",
                                                           snapshot: nil, serverTime: time.wall)))]
        }
    }

    private func duplicate(of first: ProcessedEvent, command: ClientCommand, time: HubTime) -> String {
        guard PayloadHash.matches(stored: first.payloadHash, command) else {
            counters.rejected += 1
            log.warning("eventID reused with a different payload", ["eventID": .string(command.eventID),
                                                                     "account": .string(first.account),
                                                                     "device": .string(first.device)])
            return ResultJSON.rejected(command, code: "eventIDReused", message: "eventID was used for another command",
                                       snapshot: nil, serverTime: time.wall)
        }
        guard let firstJSON = StoredResult.firstResultJSON(stored: first.result, command: command) else {
            log.error("stored result unreadable", ["eventID": .string(command.eventID)])
            return ResultJSON.rejected(command, code: "internal", message: "stored result unreadable",
                                       snapshot: nil, serverTime: time.wall)
        }
        counters.duplicates += 1
        return ResultJSON.duplicate(command, first: firstJSON, serverTime: time.wall)
    }

    private func get(_ callID: String, command: ClientCommand, device: DeviceKey, time: HubTime) -> String {
        guard let state = try? loadState(callID), state.isVisible(to: device.account) else {
            return ResultJSON.rejected(command, code: "callNotFound", message: "no such call", snapshot: nil, serverTime: time.wall)
        }
        return ResultJSON.accepted(command, callID: callID, revision: state.revision, call: .snapshot(state.snapshot),
                                   noop: true, serverTime: time.wall)
    }

    /// One attempt: reduce against the current state and commit the step atomically.
    private func apply(_ command: ClientCommand, from device: DeviceKey, on id: ConnectionID, time: HubTime) throws -> [HubAction] {
        let callID: String
        let prior: CallState?
        let event: CallEvent
        switch command.kind {
        case .invite(let callee, let proposed, let sdp, let requestedMedia):
            // Time-ordered when the server picks it: a new call's rows go to the right edge
            // of the call tables' indexes (`SecureRandom.timeOrderedIdentifier`).
            callID = try proposed ?? SecureRandom.timeOrderedIdentifier(wallMillis: time.wall)
            prior = try loadState(callID)
            if callee == device.account {
                return try record(command, device: device, callID: callID, prior: prior, time: time,
                                  rejection: ("selfCall", "cannot call your own account"), on: id)
            }
            let media: CallMedia
            switch config.mediaPolicy {
            case .always(let forced):
                if let requestedMedia, requestedMedia != forced {
                    return try record(command, device: device, callID: callID, prior: prior, time: time,
                                      rejection: ("mediaNotAllowed", "this server routes every call via \(forced.rawValue)"), on: id)
                }
                media = forced
            case .clientChoice(let fallback):
                media = requestedMedia ?? fallback
            }
            event = .invite(try makeInvite(callID: callID, caller: device, callee: callee, sdp: sdp, media: media))
        default:
            guard let existingID = command.callID else { throw WireError.malformed("missing callID") }
            callID = existingID
            prior = try loadState(callID)
            // Tested through the optional: `guard let prior` would copy the whole state.
            guard prior?.isVisible(to: device.account) == true else {
                return try record(command, device: device, callID: callID, prior: prior, time: time,
                                  rejection: ("callNotFound", "no such call"), on: id)
            }
            event = Self.event(for: command.kind, device: device)
        }
        let step = reduce(prior, event, now: time.wall, config: config.call)
        // The result is kept compact (``StoredResult``) and rendered for sending from the
        // same value, so a retry's `first` is these very bytes (minus TURN, never stored).
        let result: StoredResult
        switch step.outcome {
        case .accepted(let revision):
            result = StoredResult(callID: callID, status: .accepted(revision: revision, noop: false),
                                  call: step.state.map(ResultCall.phase(of:)), serverTime: time.wall)
        case .unchanged:
            let state = step.state ?? prior
            result = StoredResult(callID: callID, status: .accepted(revision: state?.revision ?? 0, noop: true),
                                  call: state.map(ResultCall.phase(of:)), serverTime: time.wall)
        case .rejected(let rejection):
            let visible = prior.flatMap { $0.isVisible(to: device.account) ? $0.snapshot : nil }
            result = StoredResult(callID: nil, status: .rejected(code: rejection.rawValue, message: rejection.message),
                                  call: visible.map(ResultCall.snapshot), serverTime: time.wall)
        }
        // Rendered as bytes and sent as such (no `String` in between: a copy and a UTF-8
        // validation of ~750 bytes per command).
        var sent = result.renderBytes(command, snapshots: &snapshotJSON)
        if case .accepted = step.outcome {
            sent = withTURN(sent, for: command, account: device.account, time: time)
        }
        let processed = ProcessedEvent(account: device.account, device: device.device, eventID: command.eventID,
                                       payloadHash: command.payloadHash, result: result.encode(), processedAt: time.wall)
        let actions = try commit(step, callID: callID, prior: prior, processed: processed, time: time,
                                 first: .send(id, WireText(utf8: sent)))
        // Counted once committed: a retry reaches the commit and is counted as a duplicate.
        if case .rejected = step.outcome { counters.rejected += 1 } else { counters.accepted += 1 }
        logCommand(command, device: device, callID: callID, outcome: step.outcome,
                   callAgeMs: (step.state?.createdAt ?? prior?.createdAt).map { time.wall - $0 })
        return actions
    }

    /// Records a refusal decided before the reducer (self call, unknown call) so a retry
    /// gets the same answer.
    private func record(_ command: ClientCommand, device: DeviceKey, callID: String, prior: CallState?, time: HubTime,
                        rejection: (code: String, message: String), on id: ConnectionID) throws -> [HubAction] {
        let result = StoredResult(callID: nil, status: .rejected(code: rejection.code, message: rejection.message),
                                  call: nil, serverTime: time.wall)
        let text = result.render(command)
        let processed = ProcessedEvent(account: device.account, device: device.device, eventID: command.eventID,
                                       payloadHash: command.payloadHash, result: result.encode(), processedAt: time.wall)
        try store.commit(StepCommit(callID: callID, expectedRevision: prior?.revision, processedEvent: processed, now: time.wall))
        counters.rejected += 1
        return [.send(id, WireText(text))]
    }

    private func makeInvite(callID: String, caller: DeviceKey, callee: String, sdp: String?, media: CallMedia) throws -> CallInvite {
        var calleeDevices: [String: Bool] = [:]
        for device in try store.devices(of: callee) {
            calleeDevices[device] = liveByDevice[DeviceKey(account: callee, device: device)] != nil
        }
        let callerOthers = try store.devices(of: caller.account).filter { $0 != caller.device }
        var context = InviteContext()
        for stored in try store.activeCalls(involving: callee) where stored.callID != callID {
            guard let other = try loadState(stored.callID), !other.phase.isTerminal else { continue }
            if other.phase == .ringing, other.caller.account == callee, other.callee == caller.account {
                context.glareCallID = other.callID
            } else if other.isParty(callee) {
                context.calleeBusy = true
            }
        }
        return CallInvite(callID: callID, caller: caller, callee: callee, calleeDevices: calleeDevices,
                          callerOtherDevices: callerOthers, offer: sdp.map(SessionDescription.init(sdp:)), context: context,
                          media: media)
    }

    static func event(for kind: CommandKind, device: DeviceKey) -> CallEvent {
        switch kind {
        case .ringing: return .ringing(device: device)
        case .answer(_, let revision, let sdp):
            return .answer(device: device, seenRevision: revision, sdp: sdp.map(SessionDescription.init(sdp:)))
        case .decline(_, let revision): return .decline(device: device, seenRevision: revision)
        case .cancel: return .cancel(device: device)
        case .hangup: return .hangup(device: device)
        case .mediaConnected: return .mediaConnected(device: device)
        case .mediaLost: return .mediaLost(device: device)
        case .offer(_, let generation, let sdp):
            return .sdpOffer(device: device, generation: generation, sdp: SessionDescription(sdp: sdp))
        case .answerSDP(_, let generation, let sdp):
            return .sdpAnswer(device: device, generation: generation, sdp: SessionDescription(sdp: sdp))
        case .candidate(_, let generation, let candidate, let mid, let index, let ufrag):
            return .iceCandidate(device: device, generation: generation,
                                 candidate: IceCandidate(candidate: candidate, sdpMid: mid, sdpMLineIndex: index,
                                                         usernameFragment: ufrag))
        case .invite, .get, .roomJoin, .roomLeave, .sfuOffer, .sfuAnswer, .roomRing, .roomAccept, .roomDecline, .sfuPreferences:
            // Handled before; never reaches here.
            return .hangup(device: device)
        }
    }

    /// The invite's result carries TURN credentials, minted per send and never stored.
    /// The bytes of `{"v":1,"turn":<json>,` + the result after its `{"v":1,`.
    private func withTURN(_ bytes: [UInt8], for command: ClientCommand, account: String, time: HubTime) -> [UInt8] {
        guard case .invite = command.kind, let json = turnJSON(account: account, time: time),
              bytes.starts(with: OutboxFrame.prefixBytes) else { return bytes }
        var out = OutboxFrame.prefixBytes
        out.reserveCapacity(bytes.count + json.utf8.count + 9)
        out.append(contentsOf: "\"turn\":".utf8)
        out.append(contentsOf: json.utf8)
        out.append(UInt8(ascii: ","))
        out.append(contentsOf: bytes[OutboxFrame.prefixBytes.count...])
        return out
    }

    func turnJSON(account: String, time: HubTime) -> String? {
        guard let turn, !turn.uris.isEmpty, let credentials = try? turn.issue(account: account, now: time.wall / 1000) else {
            return nil
        }
        var w = JSONWriter()
        w.field("username", credentials.username)
        w.field("password", credentials.password)
        w.field("ttlSeconds", credentials.ttlSeconds)
        w.raw("uris", "[" + credentials.uris.map { uri -> String in
            var s = ""
            JSONWriter.appendQuoted(uri, to: &s)
            return s
        }.joined(separator: ",") + "]")
        return w.finish()
    }

    /// One structured line per command: callID, eventID, revision, device, outcome, and the
    /// call's age (ms since invite: time to ring, to answer, call length at hangup).
    private func logCommand(_ command: ClientCommand, device: DeviceKey, callID: String, outcome: CallOutcome,
                            callAgeMs: Int64?) {
        let level: LogLevel
        if case .candidate = command.kind { level = .debug } else { level = .info }
        guard log.isEnabled(level) else { return }
        var fields: [String: LogValue] = ["callID": .string(callID), "eventID": .string(command.eventID),
                                          "type": .string(command.kind.wireType), "account": .string(device.account),
                                          "device": .string(device.device)]
        if let callAgeMs { fields["callAgeMs"] = .int(callAgeMs) }
        switch outcome {
        case .accepted(let revision): fields["status"] = "accepted"; fields["revision"] = .int(revision)
        case .unchanged: fields["status"] = "unchanged"
        case .rejected(let code): fields["status"] = "rejected"; fields["code"] = .string(code.rawValue)
        }
        log.log(level, "command", fields)
    }
}

extension CallState {
    /// Accounts that may see this call: the caller's and the callee's.
    func isVisible(to account: String) -> Bool {
        account == caller.account || account == callee
    }

    /// Whether `account` is a party of this call (its caller, or its answered callee): the
    /// busy rule of call-design §4 case 11.
    func isParty(_ account: String) -> Bool {
        caller.account == account || answeredBy?.account == account
    }
}

extension CallRejection {
    var message: String {
        switch self {
        case .staleRevision: return "another change was applied first; see the snapshot"
        case .invalidRevision: return "revision is newer than the call's"
        case .callNotFound: return "no such call"
        case .callExists: return "callID is taken"
        case .callEnded: return "the call has ended"
        case .notParticipant: return "not a participant of this call"
        case .notAllowed: return "not allowed for this device"
        case .alreadyAnswered: return "the call was answered; hang up instead"
        case .glare: return "the callee is calling you; answer that call"
        case .calleeUnavailable: return "the callee has no registered device"
        case .invalidEvent: return "invalid event"
        case .invalidGeneration: return "negotiation generation is not current"
        case .staleIceCredentials: return "candidate belongs to a replaced ICE session"
        case .candidateLimit: return "too many candidates buffered"
        case .invalidState: return "not legal in the call's current phase"
        }
    }
}
