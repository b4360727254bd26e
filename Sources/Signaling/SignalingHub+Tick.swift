import CallCore
import Foundation
import Logging
import Storage

extension SignalingHub {
    /// Periodic work: fire due call deadlines (also those that came due while the server was
    /// down), and close connections that never said hello, went idle or whose token expired.
    /// The adapter calls it every ~200 ms. Retention (tombstones, idempotency records, shared
    /// payloads) is the adapter's too, in bounded chunks spread over its ticks
    /// (``retentionCutoff(time:)``, `SQLiteCallStore.purgeChunk`).
    public func tick(time: HubTime) -> [HubAction] {
        var actions: [HubAction] = []
        do {
            // 256 per tick: bounds one tick's latency; the rest fire on the next tick.
            for deadline in try store.dueDeadlines(atOrBefore: time.wall, limit: 256) {
                actions += fire(deadline, time: time)
            }
        } catch {
            log.error("deadline query failed", ["error": .string("\(error)")])
        }
        // 1 s: heartbeat and hello timeouts are tens of seconds; finer checks buy nothing.
        if time.mono - lastHousekeepingMono >= 1_000 {
            lastHousekeepingMono = time.mono
            actions += closeStaleConnections(time: time)
        }
        return actions
    }

    /// Tombstones and idempotency records last updated before this wall time are past
    /// retention (`call.tombstone_retention`).
    public func retentionCutoff(time: HubTime) -> Int64 {
        time.wall - config.call.tombstoneRetention
    }

    private func fire(_ deadline: Deadline, time: HubTime) -> [HubAction] {
        let key = (callID: deadline.callID, kind: deadline.kind)
        do {
            guard let kind = DeadlineKind(rawValue: deadline.kind), let prior = try loadState(deadline.callID) else {
                try store.commit(StepCommit(callID: deadline.callID, expectedRevision: try store.loadCall(deadline.callID)?.revision,
                                            cancelDeadlines: [key], now: time.wall))
                return []
            }
            counters.deadlinesFired += 1
            let step = reduce(prior, .deadlineFired(kind), now: time.wall, config: config.call)
            log.info("deadline fired", ["callID": .string(deadline.callID), "kind": .string(deadline.kind),
                                        "dueAt": .int(deadline.dueAt), "lateMs": .int(time.wall - deadline.dueAt),
                                        "revision": .int(step.state?.revision ?? prior.revision)])
            return try commit(step, callID: deadline.callID, prior: prior, processed: nil, time: time, alsoCancel: [key])
        } catch StorageError.revisionConflict {
            callCache[deadline.callID] = nil
            return []
        } catch {
            log.error("deadline failed", ["callID": .string(deadline.callID), "kind": .string(deadline.kind),
                                          "error": .string("\(error)")])
            // A state that cannot be decoded would fire forever: drop the deadline.
            _ = try? store.commit(StepCommit(callID: deadline.callID,
                                             expectedRevision: try? store.loadCall(deadline.callID)?.revision,
                                             cancelDeadlines: [key], now: time.wall))
            return []
        }
    }

    /// Closes the connections due in ``idleChecks`` that never said hello, went idle or whose
    /// token expired, and puts the others back at their next possible reason to close. Looks
    /// only at the connections due, not at all of them (``IdleCheckSchedule``).
    private func closeStaleConnections(time: HubTime) -> [HubAction] {
        var actions: [HubAction] = []
        let due = idleChecks.takeDue(nowMono: time.mono)
        counters.idleChecks += due.count
        for id in due {
            // Not there (closed), closing, or superseded by an earlier or later scheduling.
            guard var connection = connections[id], !connection.closing, connection.checkDueMono <= time.mono else { continue }
            switch housekeeping(&connection, time: time) {
            case .close(let code, let reason):
                connection.closing = true
                if let device = connection.device, liveByDevice[device] == id { liveByDevice[device] = nil }
                actions.append(.close(id, code: code, reason: reason))
            case .checkAgain(let dueMono):
                connection.checkDueMono = dueMono
                idleChecks.schedule(id, atMono: dueMono)
            case .never:
                connection.checkDueMono = .max
            }
            connections[id] = connection
        }
        return actions
    }

    private enum Housekeeping {
        case close(UInt16, String)
        case checkAgain(atMono: Int64)
        /// A connection replaced before its hello was handled: it is being closed already.
        case never
    }

    /// What one connection's housekeeping check decides at `time`; updates its
    /// `lastFrameMono` from frames heard elsewhere (heartbeats on the shards).
    private func housekeeping(_ connection: inout Connection, time: HubTime) -> Housekeeping {
        guard connection.device != nil else {
            if connection.replaced { return .never }
            let due = connection.openedAtMono + config.helloTimeoutMs
            return time.mono > due ? .close(CloseCode.helloTimeout, "no hello") : .checkAgain(atMono: due + 1)
        }
        if time.mono - connection.lastFrameMono > config.idleTimeoutMs,
           let elsewhere = lastFrameElsewhere?(connection.id), elsewhere > connection.lastFrameMono {
            connection.lastFrameMono = elsewhere
        }
        if time.mono - connection.lastFrameMono > config.idleTimeoutMs { return .close(CloseCode.idle, "idle") }
        if time.wall > connection.tokenExpiresAtWall { return .close(CloseCode.tokenExpired, "token expired") }
        let idleDue = connection.lastFrameMono + config.idleTimeoutMs + 1
        // The token's expiry on the monotonic clock; a token without one never comes due.
        let untilExpiry = connection.tokenExpiresAtWall == .max ? Int64.max : connection.tokenExpiresAtWall - time.wall + 1
        return .checkAgain(atMono: untilExpiry >= idleDue - time.mono ? idleDue : time.mono + untilExpiry)
    }
}
