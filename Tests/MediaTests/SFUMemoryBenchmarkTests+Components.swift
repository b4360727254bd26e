import CAllocationCounter
import DTLS
import Foundation
import Glibc
@testable import Media
@testable import SFU
import SRTP
import XCTest

/// Heap per instance of the big per-participant structures (the breakdown of
/// `testMemoryPerParticipant`): each is built `HeapProbe.footprint`'s 20 times on the test
/// thread with nothing else running, heap delta (mallinfo2) / 20.
extension SFUMemoryBenchmarkTests {
    /// Runs a DTLS handshake between two in-memory endpoints; true when both connected.
    static func handshake(client: DTLSEndpoint, server: DTLSEndpoint) -> Bool {
        var toServer: [[UInt8]] = []
        var toClient: [[UInt8]] = []
        func route(_ outputs: [DTLSOutput], into queue: inout [[UInt8]]) {
            for case .send(let datagram) in outputs { queue.append(datagram) }
        }
        _ = server.start(now: 0)
        route(client.start(now: 0), into: &toServer)
        for _ in 0..<20 where client.state != .connected || server.state != .connected {
            for datagram in toServer { route(server.handle(datagram: datagram, now: 0), into: &toClient) }
            toServer.removeAll()
            for datagram in toClient { route(client.handle(datagram: datagram, now: 0), into: &toServer) }
            toClient.removeAll()
        }
        return client.state == .connected && server.state == .connected
    }

    /// An RTP packet (12-byte header, 800-byte payload) of `ssrc` in `buffer`; its length.
    static func rtp(_ buffer: UnsafeMutableRawBufferPointer, ssrc: UInt32, sequence: UInt16) -> Int {
        buffer[0] = 0x80
        buffer[1] = 96
        buffer.storeBytes(of: sequence.bigEndian, toByteOffset: 2, as: UInt16.self)
        buffer.storeBytes(of: UInt32(90_000).bigEndian, toByteOffset: 4, as: UInt32.self)
        buffer.storeBytes(of: ssrc.bigEndian, toByteOffset: 8, as: UInt32.self)
        for index in 12..<812 { buffer[index] = 0xCD }
        return 812
    }

    func testComponentFootprints() throws {
        try skipUnlessBenchmark()
        HeapProbe.install()
        var lines = ["SFU per-participant structures, heap bytes per instance (mallinfo2 delta of 20 instances / 20):"]
        func line(_ name: String, _ bytes: Int, _ note: String = "") {
            let text = Self.kb(bytes)
            lines.append("  " + name.padding(toLength: 60, withPad: " ", startingAt: 0)
                + String(repeating: " ", count: max(0, 8 - text.count)) + text + " KB" + (note.isEmpty ? "" : "  " + note))
        }

        // Sources/SFU (reported only: other helpers change these).
        let video = HeapProbe.footprint { RetransmissionCache(config: .video) }
        line("RetransmissionCache .video (per publisher video stream, top layer)", video,
             "memoryFootprint \(Self.kb(RetransmissionCache(config: .video).memoryFootprint)) KB")
        let audio = HeapProbe.footprint { RetransmissionCache(config: .audio) }
        line("RetransmissionCache .audio (per publisher audio stream)", audio,
             "memoryFootprint \(Self.kb(RetransmissionCache(config: .audio).memoryFootprint)) KB")
        line("DownlinkState, fresh (per participant)", HeapProbe.footprint { DownlinkState() })
        line("DownlinkState after its first send (BWE send history)", HeapProbe.footprint { () -> DownlinkState in
            var state = DownlinkState()
            state.estimator.packetSent(transportSequenceNumber: 1, size: 1_000, now: 0)
            return state
        }, "inline struct \(MemoryLayout<DownlinkState>.size) B")
        line("TransportFeedbackGenerator, fresh (per participant)", HeapProbe.footprint { TransportFeedbackGenerator() })
        line("TransportFeedbackGenerator after 100 packets", HeapProbe.footprint { () -> TransportFeedbackGenerator in
            var generator = TransportFeedbackGenerator()
            for sequence in 0..<100 { generator.record(sequenceNumber: UInt16(sequence), arrival: Int64(sequence) * 1_000) }
            return generator
        })
        line("NackGenerator .video (per published video layer)", HeapProbe.footprint { NackGenerator(config: .video) })
        line("BitrateMeter (per inbound stream, per downlink)", HeapProbe.footprint { BitrateMeter() })
        line("PayloadInfo table, 128 entries (per published track)", HeapProbe.footprint { Array(repeating: PayloadInfo(), count: 128) })
        line("ForwardingSlot (per subscription, inline in the track's array)", MemoryLayout<ForwardingSlot>.stride, "stride")

        // DTLS: the server's SSL object, before and after a handshake (the client is freed).
        let serverCertificate = try DTLSCertificate.generate(commonName: "server")
        let context = try DTLSContext(certificate: serverCertificate)
        let clientCertificate = try DTLSCertificate.generate(commonName: "client")
        line("DTLSEndpoint .server, new (SSL_new + BIOs)", try HeapProbe.footprint {
            try DTLSEndpoint(role: .server, context: context, expectedRemoteFingerprint: clientCertificate.sha256Fingerprint)
        })
        let clientContext = try DTLSContext(certificate: clientCertificate)
        var connected: [DTLSEndpoint] = []
        var clients: [DTLSEndpoint] = []
        let before = sb_heap_in_use()
        for _ in 0..<20 {
            let server = try DTLSEndpoint(role: .server, context: context, expectedRemoteFingerprint: clientCertificate.sha256Fingerprint)
            let client = try DTLSEndpoint(role: .client, context: clientContext, expectedRemoteFingerprint: serverCertificate.sha256Fingerprint)
            XCTAssertTrue(Self.handshake(client: client, server: server))
            connected.append(server)
            clients.append(client)
        }
        clients.removeAll()
        line("DTLSEndpoint .server after the handshake", (sb_heap_in_use() - before) / 20, "SSL_MODE_RELEASE_BUFFERS on")
        connected.removeAll()

        // libsrtp: one session (two srtp_t), then each SSRC it has seen adds a stream.
        let key = [UInt8](repeating: 7, count: 16)
        let salt = [UInt8](repeating: 9, count: 12)
        func session() throws -> SRTPSession {
            try SRTPSession(profile: .aeadAES128GCM, localKey: key, localSalt: salt, remoteKey: key, remoteSalt: salt)
        }
        line("SRTPSession AES-GCM, no stream yet", try HeapProbe.footprint { try session() })
        line("SRTPSession AES-CM + HMAC-SHA1-80, no stream yet", try HeapProbe.footprint {
            try SRTPSession(profile: .aes128CMHMACSHA180, localKey: key, localSalt: [UInt8](repeating: 9, count: 14),
                            remoteKey: key, remoteSalt: [UInt8](repeating: 9, count: 14))
        })
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2_048, alignment: 16)
        defer { buffer.deallocate() }
        let sender = try session()
        let receiver = try session()
        let streams = 60
        var heap = sb_heap_in_use()
        for ssrc in 1...UInt32(streams) { _ = try sender.protectRTP(buffer, length: Self.rtp(buffer, ssrc: ssrc, sequence: 1)) }
        line("  + per outbound SSRC (forwarded stream)", (sb_heap_in_use() - heap) / streams)
        var packets: [[UInt8]] = []
        for ssrc in 1...UInt32(streams) {
            let length = try sender.protectRTP(buffer, length: Self.rtp(buffer, ssrc: ssrc, sequence: 2))
            packets.append(Array(buffer[0..<length]))
        }
        heap = sb_heap_in_use()
        for var packet in packets { try receiver.unprotectRTP(&packet) }
        line("  + per inbound SSRC (published stream, 1024-packet replay window)", (sb_heap_in_use() - heap) / streams)
        withExtendedLifetime((sender, receiver)) {}
        XCTAssertGreaterThan(video, audio)
        print(lines.joined(separator: "\n"))
    }
}
