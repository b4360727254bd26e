import CNice
import Foundation
import Glibc
import ICE
import XCTest
@testable import Media

/// The strongest test of the ICE-lite loop: a real libnice agent in full controlling mode
/// (as a browser is against a lite server) connects to the MediaLoop on 127.0.0.1 and
/// media flows both ways over the 5-tuple the server learned from its checks alone.
final class LibniceInteropTests: XCTestCase {
    /// Datagrams libnice delivered to its receive callback.
    final class Inbox {
        let lock = NSLock()
        var datagrams: [[UInt8]] = []
        func append(_ bytes: [UInt8]) { lock.lock(); datagrams.append(bytes); lock.unlock() }
        var all: [[UInt8]] { lock.lock(); defer { lock.unlock() }; return datagrams }
    }

    func testLibniceFullAgentRegularNominationReachesReadyAndMediaFlows() throws {
        try connect(regularNomination: true)
    }

    func testLibniceFullAgentAggressiveNominationReachesReadyAndMediaFlows() throws {
        try connect(regularNomination: false)
    }

    private func connect(regularNomination: Bool) throws {
        let loop = try MediaLoop(configuration: MediaLoopConfiguration(host: "127.0.0.1", port: 0))
        let recorder = Recorder()
        recorder.attach(to: loop)
        loop.start()
        defer { loop.stop() }
        let serverUfrag = "liteSrv1"
        let serverPassword = "liteServerPassword0123456789"

        let context = g_main_context_new()
        defer { g_main_context_unref(context) }
        let agent = try XCTUnwrap(sb_nice_agent_new_controlling(context, regularNomination ? 1 : 0))
        defer { g_object_unref(UnsafeMutableRawPointer(agent)) }
        let loopback = nice_address_new()
        XCTAssertEqual(nice_address_set_from_string(loopback, "127.0.0.1"), 1)
        XCTAssertEqual(nice_agent_add_local_address(agent, loopback), 1)
        nice_address_free(loopback)
        let stream = nice_agent_add_stream(agent, 1)
        XCTAssertGreaterThan(stream, 0)
        let inbox = Inbox()
        let inboxPointer = Unmanaged.passRetained(inbox).toOpaque()
        defer { Unmanaged<Inbox>.fromOpaque(inboxPointer).release() }
        let receiveCallback: NiceAgentRecvFunc = { _, _, _, length, buffer, userData in
            guard let buffer, let userData else { return }
            let bytes = UnsafeRawBufferPointer(start: buffer, count: Int(length))
            Unmanaged<Inbox>.fromOpaque(userData).takeUnretainedValue().append(Array(bytes))
        }
        XCTAssertEqual(nice_agent_attach_recv(agent, stream, 1, context, receiveCallback, inboxPointer), 1)
        XCTAssertEqual(nice_agent_gather_candidates(agent, stream), 1)

        var clientUfragPointer: UnsafeMutablePointer<gchar>?
        var clientPasswordPointer: UnsafeMutablePointer<gchar>?
        XCTAssertEqual(nice_agent_get_local_credentials(agent, stream, &clientUfragPointer, &clientPasswordPointer), 1)
        let clientUfrag = String(cString: try XCTUnwrap(clientUfragPointer))
        let clientPassword = String(cString: try XCTUnwrap(clientPasswordPointer))
        g_free(clientUfragPointer)
        g_free(clientPasswordPointer)

        // The server knows the client's credentials (from its SDP) but no client candidate.
        let session = try loop.sync { loop in
            Result { try loop.ice.register(localUfrag: serverUfrag, localPassword: serverPassword, remoteUfrag: clientUfrag,
                                           remotePassword: clientPassword, now: MediaLoop.monotonicMilliseconds()) }
        }.get()

        // The client gets the server's credentials and its one host candidate (ICE-lite SDP).
        XCTAssertEqual(nice_agent_set_remote_credentials(agent, stream, serverUfrag, serverPassword), 1)
        let candidateLine = "a=" + (try XCTUnwrap(loop.candidateAttribute()))
        let candidate = try XCTUnwrap(nice_agent_parse_remote_candidate_sdp(agent, stream, candidateLine), candidateLine)
        var list: UnsafeMutablePointer<GSList>? = g_slist_append(nil, candidate)
        XCTAssertEqual(nice_agent_set_remote_candidates(agent, stream, 1, list), 1)
        g_slist_free(list)
        list = nil
        nice_candidate_free(candidate)

        let end = Date().addingTimeInterval(15)
        while nice_agent_get_component_state(agent, stream, 1) != NICE_COMPONENT_STATE_READY && Date() < end {
            g_main_context_iteration(context, 0)
            usleep(500)
        }
        XCTAssertEqual(nice_agent_get_component_state(agent, stream, 1), NICE_COMPONENT_STATE_READY,
                       "libnice did not reach READY; server events: \(recorder.allEvents)")

        // The pair libnice selected, seen from both sides.
        var local: UnsafeMutablePointer<NiceCandidate>?
        var remote: UnsafeMutablePointer<NiceCandidate>?
        XCTAssertEqual(nice_agent_get_selected_pair(agent, stream, 1, &local, &remote), 1)
        let clientAddress = try XCTUnwrap(Self.socketAddress(of: try XCTUnwrap(local)))
        XCTAssertEqual(Self.socketAddress(of: try XCTUnwrap(remote)), loop.localAddress)
        XCTAssertEqual(clientAddress.ipv4, 0x7F00_0001)
        XCTAssertTrue(eventually { recorder.allEvents.contains(.pathChanged(session, old: nil, new: clientAddress)) },
                      "server events: \(recorder.allEvents)")
        XCTAssertEqual(loop.sync { $0.ice.session(for: clientAddress) }, session, "5-tuple learned peer-reflexively from checks")
        XCTAssertEqual(loop.sync { $0.ice.selectedAddress(of: session) }, clientAddress)
        XCTAssertEqual(loop.counters.stunErrors, 0, "\(recorder.allEvents)")

        // Client → server media arrives at the RTP handler, tagged with the session.
        let rtp: [UInt8] = [0x80, 0x6F, 0x12, 0x34, 0, 0, 0x03, 0xE8, 0xCA, 0xFE, 0xBA, 0xBE, 0x01, 0x02]
        let sent = rtp.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: gchar.self) { nice_agent_send(agent, stream, 1, guint(rtp.count), $0.baseAddress) }
        }
        XCTAssertEqual(sent, Int32(rtp.count))
        XCTAssertTrue(eventually { recorder.allPackets.contains(Recorder.Packet(kind: "rtp", session: session, bytes: rtp)) })

        // Server → client over the selected path reaches libnice's receive callback.
        let reply: [UInt8] = [0x80, 0x60, 0x00, 0x07, 0, 0, 0, 0x10, 0x0B, 0xAD, 0xF0, 0x0D, 0x99]
        XCTAssertTrue(loop.sync { $0.send(reply, to: session) })
        let replyEnd = Date().addingTimeInterval(5)
        while !inbox.all.contains(reply) && Date() < replyEnd {
            g_main_context_iteration(context, 0)
            usleep(500)
        }
        XCTAssertTrue(inbox.all.contains(reply))
        let events = recorder.allEvents
        print("libnice (\(regularNomination ? "regular" : "aggressive") nomination) → lite loop: \(events.count) ICE events, counters \(loop.counters)")
    }

    static func socketAddress(of candidate: UnsafeMutablePointer<NiceCandidate>) -> SocketAddress? {
        var storage = sockaddr_storage()
        return withUnsafeMutableBytes(of: &storage) { raw -> SocketAddress? in
            nice_address_copy_to_sockaddr(&candidate.pointee.addr, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self))
            return SocketAddress(sockaddr: raw.baseAddress!, length: MemoryLayout<sockaddr_storage>.size)
        }
    }
}
