import Auth
import Foundation
import IO
import Signaling
import Storage

extension SwitchboardServer {
    func installRoutes(on server: HTTPServer) {
        server.route("GET", "/healthz") { _ in .json(200, Data("{\"status\":\"ok\"}".utf8)) }
        server.route("GET", "/readyz") { [unowned self] _ in
            hub.isReady() ? .json(200, Data("{\"status\":\"ready\"}".utf8))
                          : .json(503, Data("{\"status\":\"unavailable\"}".utf8))
        }
        server.route("GET", "/v1/calls") { [unowned self] request in
            let callID = String(request.path.dropFirst("/v1/calls/".count))
            let (status, body) = hub.callSnapshot(callID: callID, authorization: request.headers["authorization"], time: now())
            return .json(status, Data(body.utf8))
        }
        server.route("GET", "/metrics") { [unowned self] _ in .text(200, metricsText()) }
        // The browser client (WebClient.swift). "/" is the catch-all prefix: only "/" itself
        // and "/index.html" get the page, anything else stays a 404.
        server.route("GET", "/") { request in
            guard request.path == "/" || request.path == "/index.html" else {
                return .json(404, Data("{\"error\":\"not_found\"}".utf8))
            }
            return WebClient.response()
        }
        // DEVELOPMENT ONLY (auth.dev_tokens): anyone becomes any account. 404 when disabled.
        if config.auth.devTokens {
            log.warning("auth.dev_tokens is on: POST /v1/dev/token gives anyone a token for any account (development only)", [:])
        }
        let devSigner = config.auth.devTokens ? (try? config.resolveTokenSecret()).map { TokenSigner(secret: $0) } : nil
        server.route("POST", "/v1/dev/token") { request in
            guard let signer = devSigner else { return .json(404, Data("{\"error\":\"not_found\"}".utf8)) }
            return DevToken.response(enabled: true, body: request.body, signer: signer,
                                     now: EventLoop.wallClockMilliseconds() / 1000)
        }
    }

    /// Prometheus text exposition (version 0.0.4) of the signaling counters.
    func metricsText() -> String {
        let c = hub.counters
        var lines: [String] = []
        func metric(_ name: String, _ type: String, _ help: String, _ value: CustomStringConvertible) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
            lines.append("\(name) \(value)")
        }
        metric("switchboard_ws_connections", "gauge", "Open WebSocket connections.", hub.connectionCount)
        metric("switchboard_devices_live", "gauge", "Authenticated devices with a live connection.", hub.liveDeviceCount)
        metric("switchboard_commands_total", "counter", "Commands received.", c.commands)
        metric("switchboard_commands_accepted_total", "counter", "Commands accepted.", c.accepted)
        metric("switchboard_commands_rejected_total", "counter", "Commands rejected.", c.rejected)
        metric("switchboard_commands_duplicate_total", "counter", "Commands answered from the eventID record.", c.duplicates)
        metric("switchboard_commands_rate_limited_total", "counter", "Commands refused by the rate limit.", c.rateLimited)
        metric("switchboard_frames_malformed_total", "counter", "Frames that were not valid messages.", c.malformedFrames)
        metric("switchboard_pongs_on_shards_total", "counter", "Pings of authenticated connections answered by their shard thread (not the hub).",
               Self.pongsOnShards.load(ordering: .relaxed))
        metric("switchboard_auth_failures_total", "counter", "Hellos with a bad or expired token.", c.authFailures)
        metric("switchboard_deadlines_fired_total", "counter", "Call deadlines fired.", c.deadlinesFired)
        metric("switchboard_revision_conflicts_total", "counter", "Commits retried after a revision conflict.", c.revisionConflicts)
        metric("switchboard_events_delivered_total", "counter", "Durable events sent to devices.", c.eventsDelivered)
        metric("switchboard_idle_checks_total", "counter", "Connections looked at by housekeeping (hello, idle and token checks).", c.idleChecks)
        if let p50 = commandTimes.percentile(0.5), let p99 = commandTimes.percentile(0.99) {
            lines.append("# HELP switchboard_frame_handling_microseconds Frame handling time over the last \(LatencyWindow.capacity) frames.")
            lines.append("# TYPE switchboard_frame_handling_microseconds summary")
            lines.append("switchboard_frame_handling_microseconds{quantile=\"0.5\"} \(p50)")
            lines.append("switchboard_frame_handling_microseconds{quantile=\"0.99\"} \(p99)")
            lines.append("switchboard_frame_handling_microseconds_count \(commandTimes.total)")
        }
        lines += timings.expositionLines()
        lines += shardWrites.expositionLines()
        if let wal = store.walCheckpoints {
            metric("switchboard_wal_checkpoint_rounds_total", "counter", "Background checkpoint rounds.", wal.rounds)
            metric("switchboard_wal_checkpoint_passes_total", "counter", "Passive checkpoint passes (first and catch-up).", wal.passes)
            metric("switchboard_wal_checkpoint_caught_up_total", "counter", "Rounds that copied every WAL frame (the writer restarts the WAL without waiting).", wal.caughtUp)
            metric("switchboard_wal_checkpoint_restarts_total", "counter", "RESTART checkpoints (each holds the hub's writer off).", wal.restarts)
            metric("switchboard_wal_checkpoint_failures_total", "counter", "Checkpoint rounds that failed.", wal.failures)
            metric("switchboard_wal_frames_written_total", "counter", "WAL frames (4 KiB pages) the writer appended.", wal.framesWritten)
        }
        if SQLiteWALWrites.isRegistered {
            let writes = SQLiteWALWrites.stats
            metric("switchboard_wal_writes_total", "counter", "Writes SQLite made to WAL files (two per frame).", writes.walWrites)
            metric("switchboard_wal_kernel_writes_total", "counter", "Writes that reached the kernel for WAL files (up to 31 frames each).",
                   writes.realWalWrites)
            metric("switchboard_wal_write_failures_total", "counter", "WAL writes that failed (each failed its transaction).",
                   writes.flushFailures)
        }
        if let bytes = try? store.bytesInUse() {
            metric("switchboard_db_bytes_in_use", "gauge", "Bytes of the database's pages that hold data (page_count − freelist_count, × page_size).", bytes)
        }
        metric("switchboard_glib_debug_messages_dropped_total", "counter",
               "GLib debug and info messages (libsoup's, mostly) dropped before formatting because no one asked for them.",
               GLibLogFilter.dropped)
        lines += layerMetricsLines()
        lines += mediaMetricsLines()
        return lines.joined(separator: "\n") + "\n"
    }
}
