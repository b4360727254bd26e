import DTLS
import Foundation
import Glibc
import ICE
import SDP
import SRTP
import XCTest
@testable import Media

/// SFUServer end to end on 127.0.0.1: real UDP, STUN checks, DTLS handshakes, SRTP, the router.
final class SFUServerTests: XCTestCase {
    var server: SFUServer!
    let events = ServerEvents()

    func startServer(consentTimeout: Int64 = 30_000) throws {
        server = try SFUServer(configuration: MediaConfiguration(host: "127.0.0.1", port: 0,
                                                                 consentTimeoutMilliseconds: consentTimeout, ssrcSeed: 42))
        events.attach(to: server)
        server.start()
    }

    override func tearDown() {
        server?.stop()
        server = nil
    }

    /// Joins all `clients` into `room`, answers the server offers, returns when all are connected.
    func joinAll(_ clients: [SyntheticClient], room: String = "r1") throws {
        for (index, client) in clients.enumerated() {
            try joinAndConnect(client, server: server, room: room, events: events, others: Array(clients[..<index]))
        }
        try settleOffers(clients, server: server, events: events)
    }

    /// Each client sends `count` packets tagged with its name; every other client must get
    /// all of them, on the SSRC the server offered for that publisher (rewritten, not the
    /// publisher's), with consecutive sequence numbers and the payload unchanged.
    func exchange(_ clients: [SyntheticClient], count: Int = 40) throws {
        for client in clients { client.received.removeAll() }
        for index in 0..<count {
            for client in clients { try client.sendRTP(payload: Array("\(client.member)#\(index)".utf8)) }
            _ = try drive(clients, timeout: 0.002) { false }
        }
        let expected = clients.count - 1
        XCTAssertTrue(try drive(clients) { clients.allSatisfy { $0.received.count >= count * expected } },
                      "received: \(clients.map { $0.received.count }), stats \(server.stats().counters)")
        for receiver in clients {
            for sender in clients where sender !== receiver {
                let ssrcs = receiver.offeredStreams.filter { $0.value == sender.member.streamID }.map(\.key)
                XCTAssertEqual(ssrcs.count, 1, "\(receiver.member) has one offered SSRC for \(sender.member)")
                guard let ssrc = ssrcs.first else { continue }
                XCTAssertNotEqual(ssrc, sender.ssrc, "SSRC rewritten per subscriber")
                let packets = receiver.received.filter { $0.ssrc == ssrc }
                XCTAssertEqual(packets.map { String(decoding: $0.payload, as: UTF8.self) },
                               (0..<count).map { "\(sender.member)#\($0)" }, "\(receiver.member) ← \(sender.member)")
                for (a, b) in zip(packets, packets.dropFirst()) { XCTAssertEqual(b.sequenceNumber, a.sequenceNumber &+ 1) }
                XCTAssertTrue(packets.allSatisfy { $0.payloadType == 111 })
            }
        }
    }

    func testTwoMembersExchangeSRTPWithSSRCRewriting() throws {
        try startServer()
        let a = try SyntheticClient("alice/phone", serverPort: server.port)
        let b = try SyntheticClient("bob/laptop", serverPort: server.port)
        try joinAll([a, b])
        try exchange([a, b])
        let stats = server.stats()
        XCTAssertGreaterThanOrEqual(stats.counters.forwarded, 80)
        XCTAssertEqual(stats.counters.srtpAuthFailures, 0)
        XCTAssertEqual(stats.members.count, 2)
        XCTAssertTrue(stats.members.allSatisfy { $0.connected && $0.packetsIn >= 40 && $0.packetsOut >= 40 && !$0.offerOutstanding })
        print("two members: \(stats.counters)")
    }

    func testThreeMembersThenOneLeavesAndTheOthersAreRenegotiated() throws {
        try startServer()
        let clients = try ["a/1", "b/1", "c/1"].map { try SyntheticClient($0, serverPort: server.port) }
        try joinAll(clients)
        try exchange(clients)
        let before = server.stats().members.first { $0.member == clients[0].member }!.generation
        XCTAssertNoThrow(try server.leaveSync(member: clients[2].member).get())
        XCTAssertEqual(events.leaveReason(clients[2].member), .left)
        XCTAssertEqual(server.leaveSync(member: clients[2].member).failureValue, .unknownMember)
        XCTAssertTrue(try drive(clients) { true })
        // a and b each get one new offer where c's section is inactive (mid kept).
        let offers = events.waitOffers(for: clients[0].member)
        XCTAssertEqual(offers.count, 1)
        let offer = try SessionDescription(parsing: try XCTUnwrap(offers.first).sdp)
        XCTAssertEqual(offers.first?.generation, before + 1)
        XCTAssertEqual(offer.media.count, 3, "own section + two forwarded sections, mids kept")
        XCTAssertEqual(offer.media.map { $0.explicitDirection }, [.recvonly, .sendonly, .inactive].map(Optional.some))
        XCTAssertNoThrow(try server.applyAnswerSync(member: clients[0].member, generation: before + 1,
                                                    sdp: clients[0].answer(serverOffer: offers[0].sdp)).get())
        try settleOffers(Array(clients[..<2]), server: server, events: events)
        try exchange(Array(clients[..<2]))
        // A new member reuses the inactive section.
        let d = try SyntheticClient("d/1", serverPort: server.port)
        try joinAndConnect(d, server: server, room: "r1", events: events, others: Array(clients[..<2]))
        let reoffer = try XCTUnwrap(events.waitOffers(for: clients[0].member).last)
        XCTAssertEqual(try SessionDescription(parsing: reoffer.sdp).media.map { $0.explicitDirection },
                       [.recvonly, .sendonly, .sendonly].map(Optional.some), "c's freed section reused for d")
        XCTAssertNoThrow(try server.applyAnswerSync(member: clients[0].member, generation: reoffer.generation,
                                                    sdp: clients[0].answer(serverOffer: reoffer.sdp)).get())
        try settleOffers([clients[0], clients[1], d], server: server, events: events)
        try exchange([clients[0], clients[1], d])
    }

    func testGlareAndInvalidGenerationAndICERestart() throws {
        try startServer()
        let a = try SyntheticClient("a/1", serverPort: server.port)
        let b = try SyntheticClient("b/1", serverPort: server.port)
        try joinAndConnect(a, server: server, room: "r", events: events)
        try joinAndConnect(b, server: server, room: "r", events: events, others: [a])
        XCTAssertTrue(try drive([a, b]) { true })
        let offer = try XCTUnwrap(events.waitOffers(for: a.member).first)
        // The device offers while ours is outstanding: glare (server impolite).
        XCTAssertEqual(server.joinSync(room: "r", member: a.member, offer: a.offer()).failureValue, .glare)
        XCTAssertEqual(server.applyAnswerSync(member: a.member, generation: offer.generation + 1,
                                              sdp: try a.answer(serverOffer: offer.sdp)).failureValue, .invalidGeneration)
        XCTAssertEqual(server.applyAnswerSync(member: a.member, generation: offer.generation, sdp: "garbage").failureValue?.code,
                       "sdp_invalid")
        XCTAssertNoThrow(try server.applyAnswerSync(member: a.member, generation: offer.generation,
                                                    sdp: a.answer(serverOffer: offer.sdp)).get())
        XCTAssertEqual(server.applyAnswerSync(member: a.member, generation: offer.generation,
                                              sdp: try a.answer(serverOffer: offer.sdp)).failureValue, .invalidGeneration)
        XCTAssertEqual(server.joinSync(room: "other", member: a.member, offer: a.offer()).failureValue, .wrongRoom)
        try settleOffers([a, b], server: server, events: events)

        // ICE restart: a re-offer with a new ufrag gets new server credentials; the old
        // path keeps media flowing and checks with the new credentials are accepted.
        let oldServerUfrag = a.serverUfrag
        a.ufrag = SFUServer.randomICEString(8)
        // The device re-offer must keep the server's sections: build it from a's last answer shape.
        let restartOffer = try restartOffer(for: a)
        let answer = try server.joinSync(room: "r", member: a.member, offer: restartOffer).get()
        try a.accept(serverDescription: answer.sdp)
        XCTAssertNotEqual(a.serverUfrag, oldServerUfrag)
        a.checkAnswered = false
        try a.sendCheck(now: MediaLoop.monotonicMilliseconds())
        XCTAssertTrue(try drive([a, b]) { a.checkAnswered })
        XCTAssertEqual(server.stats().loop.stunErrors, 0)
        XCTAssertEqual(try SessionDescription(parsing: answer.sdp).media.map { $0.explicitDirection },
                       [.recvonly, .sendonly].map(Optional.some), "forwarded section answered sendonly in a device re-offer")
        try exchange([a, b])
    }

    /// A device re-offer: its own section plus the server's sections mirrored (recvonly).
    func restartOffer(for client: SyntheticClient) throws -> String {
        var text = client.offer()
        let forwarded = client.offeredStreams.keys.sorted()
        XCTAssertFalse(forwarded.isEmpty)
        // Append the forwarded section(s) the server added (mid sfu1…).
        for index in 1...forwarded.count {
            text += ["m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=ice-ufrag:\(client.ufrag)",
                     "a=ice-pwd:\(client.password)", "a=fingerprint:\(client.certificate.sha256Fingerprint.sdpValue)",
                     "a=setup:actpass", "a=mid:sfu\(index)", "a=recvonly", "a=rtcp-mux", "a=rtpmap:111 opus/48000/2", ""]
                .joined(separator: "\r\n")
        }
        return text.replacingOccurrences(of: "a=group:BUNDLE 0", with: "a=group:BUNDLE 0 " + (1...forwarded.count).map { "sfu\($0)" }.joined(separator: " "))
    }

    func testGarbageDatagramsAreCountedAndDroppedWithoutCrash() throws {
        try startServer()
        let a = try SyntheticClient("a/1", serverPort: server.port)
        let b = try SyntheticClient("b/1", serverPort: server.port)
        try joinAll([a, b])
        let before = server.stats()
        var random = SystemRandomNumberGenerator()
        func junk(_ first: UInt8, _ second: UInt8? = nil, length: Int) -> [UInt8] {
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            bytes[0] = first
            if let second, length > 1 { bytes[1] = second }
            return bytes
        }
        let datagrams: [[UInt8]] = [
            [0x80, 0x6F, 0x00],                       // truncated RTP
            junk(0x80, 0x6F, length: 100),             // garbage SRTP (auth fails)
            junk(0x80, 0x6F, length: 20),              // short SRTP
            [0x80, 0xC8, 0x00, 0x01],                  // truncated RTCP
            junk(0x81, 0xC9, length: 80),              // garbage SRTCP
            junk(0x00, 0x01, length: 60),              // garbage STUN
            [0x00, 0x01, 0x00],                        // truncated STUN
            junk(0x16, 0xFE, length: 90),              // garbage DTLS
            [0x17],                                    // truncated DTLS
            junk(0xFF, length: 30),                    // unknown kind
            [UInt8](repeating: 0x80, count: 4000),     // oversized
        ]
        for datagram in datagrams { a.send(datagram) }
        // Same from an address the server never validated.
        let stranger = try SyntheticClient("x/1", serverPort: server.port)
        for datagram in datagrams { stranger.send(datagram) }
        XCTAssertTrue(try drive([a, b]) {
            let stats = self.server.stats()
            return stats.loop.datagramsIn >= before.loop.datagramsIn + UInt64(2 * datagrams.count)
        })
        let after = server.stats()
        XCTAssertGreaterThanOrEqual(after.counters.srtpAuthFailures + after.counters.srtpMalformed,
                                    before.counters.srtpAuthFailures + before.counters.srtpMalformed + 4)
        XCTAssertGreaterThanOrEqual(after.loop.stunErrors, before.loop.stunErrors + 2)
        XCTAssertGreaterThanOrEqual(after.counters.dtlsDropped, before.counters.dtlsDropped + 1)
        XCTAssertGreaterThanOrEqual(after.loop.unknownKindDrops, before.loop.unknownKindDrops + 2)
        XCTAssertGreaterThanOrEqual(after.loop.oversizedDrops, before.loop.oversizedDrops + 2)
        XCTAssertGreaterThanOrEqual(after.loop.unknownPeerDrops, before.loop.unknownPeerDrops + 5)
        XCTAssertEqual(after.members.count, 2, "nobody was removed")
        // Media still flows.
        try exchange([a, b], count: 10)
        print("garbage: \(after.counters) loop \(after.loop)")
    }

    func testUnknownSSRCIsCounted() throws {
        try startServer()
        let a = try SyntheticClient("a/1", serverPort: server.port)
        try joinAll([a])
        var packet: [UInt8] = [0x80, 111, 0, 1, 0, 0, 0, 1, 0xDE, 0xAD, 0xBE, 0xEF, 1, 2, 3]
        try XCTUnwrap(a.srtp).protectRTP(&packet)
        a.send(packet)
        XCTAssertTrue(try drive([a]) { self.server.stats().counters.unknownSSRC == 1 })
    }

    func testBadFingerprintFailsDTLSAndRemovesTheMember() throws {
        try startServer()
        let a = try SyntheticClient("a/1", serverPort: server.port)
        let other = try DTLSCertificate.generate(commonName: "impostor")
        let answer = try server.joinSync(room: "r", member: a.member, offer: a.offer(fingerprint: other.sha256Fingerprint.sdpValue)).get()
        try a.accept(serverDescription: answer.sdp)
        try a.sendCheck(now: MediaLoop.monotonicMilliseconds())
        XCTAssertTrue(try drive([a]) { a.checkAnswered })
        try a.startDTLS(now: MediaLoop.monotonicMilliseconds())
        XCTAssertTrue(try drive([a]) { self.events.leaveReason(a.member) != nil })
        XCTAssertEqual(events.leaveReason(a.member), .dtlsFailed)
        XCTAssertFalse(events.hasJoined(a.member))
        let stats = server.stats()
        XCTAssertEqual(stats.counters.dtlsFailures, 1)
        XCTAssertTrue(stats.members.isEmpty)
        XCTAssertNil(a.srtp)
        // Malformed fingerprint in the offer: typed error, nothing registered.
        let b = try SyntheticClient("b/1", serverPort: server.port)
        XCTAssertNotNil(server.joinSync(room: "r", member: b.member, offer: b.offer(fingerprint: "sha-256 00:11")).failureValue)
        XCTAssertEqual(server.joinSync(room: "r", member: b.member, offer: "v=0\r\nbogus").failureValue?.code, "sdp_invalid")
        XCTAssertTrue(server.stats().members.isEmpty)
    }

    func testSRTPWithWrongKeyCountsAuthFailures() throws {
        try startServer()
        let a = try SyntheticClient("a/1", serverPort: server.port)
        let b = try SyntheticClient("b/1", serverPort: server.port)
        try joinAll([a, b])
        let wrong = try SRTPSession(profile: a.srtp!.profile, localKey: (0..<16).map { UInt8($0) }, localSalt: [UInt8](repeating: 7, count: a.srtp!.profile.saltLength),
                                    remoteKey: [UInt8](repeating: 1, count: 16), remoteSalt: [UInt8](repeating: 2, count: a.srtp!.profile.saltLength))
        for index in 0..<5 { a.send(try a.rtpPacket(payload: [UInt8(index)], session: wrong)) }
        XCTAssertTrue(try drive([a, b]) { self.server.stats().counters.srtpAuthFailures >= 5 })
        let member = try XCTUnwrap(server.stats().members.first { $0.member == a.member })
        XCTAssertEqual(member.srtpAuthFailures, 5)
        XCTAssertEqual(server.stats().counters.forwarded, 0, "nothing forged was forwarded")
        // A replayed genuine packet is counted as a replay.
        let genuine = try a.rtpPacket(payload: [9])
        a.send(genuine)
        a.send(genuine)
        XCTAssertTrue(try drive([a, b]) { self.server.stats().counters.srtpReplays >= 1 })
    }

    func testConsentExpiryRemovesTheMemberAndTheOthersAreRenegotiated() throws {
        try startServer(consentTimeout: 1_500)
        let a = try SyntheticClient("a/1", serverPort: server.port)
        let b = try SyntheticClient("b/1", serverPort: server.port)
        try joinAll([a, b])
        a.keepAlive = false  // a vanishes: no more consent checks
        XCTAssertTrue(try drive([a, b], timeout: 10) { self.events.leaveReason(a.member) != nil })
        XCTAssertEqual(events.leaveReason(a.member), .consentExpired)
        XCTAssertNil(events.leaveReason(b.member), "b kept its consent fresh")
        let offer = try XCTUnwrap(events.waitOffers(for: b.member).last)
        XCTAssertEqual(try SessionDescription(parsing: offer.sdp).media.map { $0.explicitDirection },
                       [.recvonly, .inactive].map(Optional.some))
        XCTAssertEqual(server.stats().members.map(\.member), [b.member])
    }

    func testStatsPerMemberWithFourMembers() throws {
        try startServer()
        let clients = try (0..<4).map { try SyntheticClient("m\($0)/d", serverPort: server.port) }
        try joinAll(clients)
        try exchange(clients, count: 10)
        let stats = server.stats()
        XCTAssertEqual(stats.members.count, 4)
        XCTAssertEqual(stats.subscriptions, 12)
        XCTAssertTrue(stats.members.allSatisfy { $0.packetsIn >= 10 && $0.packetsOut >= 30 && $0.packetsLost == 0 })
    }

    func testUnsignaledSSRCIsLearnedFromTheMidExtension() throws {
        try startServer()
        let a = try SyntheticClient("a/1", serverPort: server.port)
        a.signalSSRC = false
        let b = try SyntheticClient("b/1", serverPort: server.port)
        XCTAssertFalse(a.offer().contains("a=ssrc"))
        try joinAll([a, b])
        try exchange([a, b], count: 10)
        XCTAssertEqual(server.stats().counters.unknownSSRC, 0)
    }

    func testDTLSBeforeNominationIsAnsweredToTheClientHelloSource() throws {
        try startServer()
        let a = try SyntheticClient("a/1", serverPort: server.port)
        let answer = try server.joinSync(room: "r", member: a.member, offer: a.offer()).get()
        try a.accept(serverDescription: answer.sdp)
        a.keepAlive = false
        try a.sendCheck(now: MediaLoop.monotonicMilliseconds(), nominate: false)
        XCTAssertTrue(try drive([a]) { a.checkAnswered })
        try a.startDTLS(now: MediaLoop.monotonicMilliseconds())
        XCTAssertTrue(try drive([a]) { a.srtp != nil && self.events.hasJoined(a.member) }, "DTLS completes without nomination")
        XCTAssertEqual(server.stats().loop.noPathDrops, 0)
    }

    /// RTCP is terminated per leg: the server consumes a publisher's SR and sends its own
    /// reports (SR for our outgoing SSRC to the subscriber, RR to the publisher) within the
    /// 5 s audio report interval (docs/rtcp.md).
    func testRTCPIsConsumedAndReportsAreSentOnEachLeg() throws {
        try startServer()
        let a = try SyntheticClient("a/1", serverPort: server.port)
        let b = try SyntheticClient("b/1", serverPort: server.port)
        try joinAll([a, b])
        try exchange([a, b], count: 5)
        var report: [UInt8] = [0x80, 200, 0, 6] + withUnsafeBytes(of: a.ssrc.bigEndian, Array.init)
            + [0xE9, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x5F, 0x90, 0, 0, 0, 5, 0, 0, 0, 0xA0]
        report.reserveCapacity(report.count + 32)
        try XCTUnwrap(a.srtp).protectRTCP(&report)
        a.send(report)
        XCTAssertTrue(try drive([a, b]) { self.server.stats().counters.rtcpIn >= 1 })
        XCTAssertTrue(try drive([a, b], timeout: 8) { a.rtcpReceived >= 1 && b.rtcpReceived >= 1 },
                      "reports: a \(a.rtcpReceived), b \(b.rtcpReceived), \(server.stats().counters)")
        let counters = server.stats().counters
        XCTAssertEqual(counters.rtcpMalformed, 0)
        XCTAssertGreaterThanOrEqual(counters.rtcpOut, 2)
        XCTAssertEqual(a.unprotectFailures + b.unprotectFailures, 0)
    }

    func testCallsOnAStoppedServerFailWithNotRunning() throws {
        try startServer()
        let a = try SyntheticClient("a/1", serverPort: server.port)
        server.stop()
        XCTAssertEqual(server.joinSync(room: "r", member: a.member, offer: a.offer()).failureValue, .notRunning)
        XCTAssertEqual(server.applyAnswerSync(member: a.member, generation: 1, sdp: "").failureValue, .notRunning)
        XCTAssertEqual(server.leaveSync(member: a.member).failureValue, .notRunning)
        XCTAssertTrue(server.stats().members.isEmpty)
    }

    /// Protocol §9: changes within 100 ms fold into one offer; while an offer is outstanding
    /// no other goes out; the changes made meanwhile come in the next one after the answer.
    func testRenegotiationIsCoalescedAndOneOfferIsOutstanding() throws {
        try startServer()
        let a = try SyntheticClient("a/1", serverPort: server.port)
        _ = try server.joinSync(room: "r", member: a.member, offer: a.offer()).get()
        // Queued together, so they reach the loop within one wakeup whatever the host load.
        let others = try ["b/1", "c/1", "d/1"].map { try SyntheticClient($0, serverPort: server.port) }
        let joined = DispatchGroup()
        for other in others {
            joined.enter()
            server.join(room: "r", member: other.member, offer: other.offer()) { _ in joined.leave() }
        }
        joined.wait()
        var first: [(generation: UInt64, sdp: String)] = []
        XCTAssertTrue(eventually { first += self.events.takeOffers(for: a.member); return !first.isEmpty })
        Thread.sleep(forTimeInterval: 0.3)
        first += events.takeOffers(for: a.member)
        XCTAssertEqual(first.count, 1, "three joins folded into one offer")
        XCTAssertEqual(try SessionDescription(parsing: first[0].sdp).media.filter { $0.explicitDirection == .sendonly }.count, 3)
        let e = try SyntheticClient("e/1", serverPort: server.port)
        _ = try server.joinSync(room: "r", member: e.member, offer: e.offer()).get()
        Thread.sleep(forTimeInterval: 0.4)
        XCTAssertTrue(events.takeOffers(for: a.member).isEmpty, "no second offer while one is outstanding")
        XCTAssertNoThrow(try server.applyAnswerSync(member: a.member, generation: first[0].generation,
                                                    sdp: a.answer(serverOffer: first[0].sdp)).get())
        var second: [(generation: UInt64, sdp: String)] = []
        XCTAssertTrue(eventually { second += self.events.takeOffers(for: a.member); return !second.isEmpty })
        XCTAssertEqual(second.map(\.generation), [first[0].generation + 1])
        let media = try SessionDescription(parsing: try XCTUnwrap(second.first).sdp).media
        XCTAssertEqual(media.count, 5)
        XCTAssertEqual(Array(media.prefix(4).map(\.mid)), try SessionDescription(parsing: first[0].sdp).media.map(\.mid), "mids kept in order")
    }
}

extension Result {
    var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
