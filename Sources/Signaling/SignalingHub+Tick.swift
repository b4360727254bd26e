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

    /// Changes are collected and applied after the scan: a write to `connections` while
    /// the loop holds it made the whole dictionary copy itself (10,000 connections: ~5 ms
    /// per scan on the hub thread in perf, once heartbeats were answered on the shards and
    /// every scan refreshed some `lastFrameMono`).
    private func closeStaleConnections(time: HubTime) -> [HubAction] {
        var actions: [HubAction] = []
        var heard: [(ConnectionID, Int64)] = []
        var closing: [(ConnectionID, DeviceKey?)] = []
        for (id, connection) in connections where !connection.closing {
            let close: (UInt16, String)?
            if connection.device == nil {
                close = time.mono - connection.openedAtMono > config.helloTimeoutMs && !connection.replaced
                    ? (CloseCode.helloTimeout, "no hello") : nil
            } else if time.mono - connection.lastFrameMono > config.idleTimeoutMs {
                // Heard from since, on a path that bypasses the hub (heartbeats on shards)?
                if let elsewhere = lastFrameElsewhere?(id), elsewhere > connection.lastFrameMono {
                    heard.append((id, elsewhere))
                    if time.mono - elsewhere <= config.idleTimeoutMs { continue }
                }
                close = (CloseCode.idle, "idle")
            } else if time.wall > connection.tokenExpiresAtWall {
                close = (CloseCode.tokenExpired, "token expired")
            } else {
                close = nil
            }
            guard let (code, reason) = close else { continue }
            closing.append((id, connection.device))
            actions.append(.close(id, code: code, reason: reason))
        }
        for (id, mono) in heard { connections[id]?.lastFrameMono = mono }
        for (id, device) in closing {
            connections[id]?.closing = true
            if let device, liveByDevice[device] == id { liveByDevice[device] = nil }
        }
        return actions
    }
}
