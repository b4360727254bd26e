import CNice
import Glibc
import STUN
import XCTest
@testable import ICE
import SplitMix

final class ICELiteAgentTests: XCTestCase {
    /// libnice builds the check as a full controlling agent; our agent validates it with
    /// libnice and answers; the client-side libnice agent accepts the answer and reads the
    /// peer-reflexive (mapped) address from it.
    func testLibniceCheckValidatedAndAnswerAcceptedByLibnice() throws {
        let (agent, id) = try Fixture.agentWithSession()
        var client = StunAgent()
        stun_agent_init(&client, LibniceSTUN.knownAttributes, STUN_COMPATIBILITY_RFC5389,
                        StunAgentUsageFlags(STUN_AGENT_USAGE_SHORT_TERM_CREDENTIALS.rawValue | STUN_AGENT_USAGE_USE_FINGERPRINT.rawValue))
        let username = Array("\(Fixture.serverUfrag):\(Fixture.clientUfrag)".utf8)
        let password = Array(Fixture.serverPassword.utf8)
        var request = StunMessage()
        var buffer = [UInt8](repeating: 0, count: 1024)
        let length = password.withUnsafeBufferPointer { passwordPointer in
            let length = stun_usage_ice_conncheck_create(&client, &request, &buffer, buffer.count, username, username.count,
                                                         passwordPointer.baseAddress, password.count, true, true, 0x6E7F_00FF,
                                                         0x99, nil, STUN_USAGE_ICE_COMPATIBILITY_RFC5245)
            XCTAssertGreaterThan(length, 20)
            let action = agent.handleSTUN(Array(buffer[0..<length]), from: Fixture.client, now: 1_000)
            XCTAssertEqual(action.events, [.checkValidated(id, Fixture.client, nominated: true),
                                           .pathChanged(id, old: nil, new: Fixture.client)])
            XCTAssertEqual(action.responseAddress, Fixture.client)
            guard let response = action.response else { XCTFail("no response"); return 0 }
            var reply = StunMessage()
            XCTAssertEqual(stun_agent_validate(&client, &reply, response, response.count, nil, nil), STUN_VALIDATION_SUCCESS)
            var mapped = sockaddr_storage()
            var mappedLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            XCTAssertEqual(stun_usage_ice_conncheck_process(&reply, &mapped, &mappedLength, STUN_USAGE_ICE_COMPATIBILITY_RFC5245),
                           STUN_USAGE_ICE_RETURN_SUCCESS)
            XCTAssertEqual(withUnsafeBytes(of: &mapped) { SocketAddress(sockaddr: $0.baseAddress!, length: Int(mappedLength)) },
                           Fixture.client)
            return length
        }
        XCTAssertGreaterThan(length, 0)
        XCTAssertEqual(agent.session(for: Fixture.client), id)
        XCTAssertEqual(agent.selectedAddress(of: id), Fixture.client)
    }

    /// RFC 5769 §2.1 is authenticated through libnice's validater; it carries ICE-CONTROLLED,
    /// so the lite agent (always controlled) answers a signed 487 Role Conflict.
    func testRFC5769SampleRequestAuthenticatesAndGets487() throws {
        let agent = ICELiteAgent()
        let id = try agent.register(localUfrag: RFC5769.localUfrag, localPassword: RFC5769.password,
                                    remoteUfrag: RFC5769.remoteUfrag, now: 0)
        let action = agent.handleSTUN(RFC5769.request, from: Fixture.client, now: 0)
        XCTAssertEqual(action.events, [.reject(.roleConflict(id))])
        let response = try XCTUnwrap(action.parsedResponse)
        XCTAssertEqual(response.type, .bindingError)
        XCTAssertEqual(response.errorCode?.code, 487)
        XCTAssertEqual(response.transactionID, try STUNMessage(parsing: RFC5769.request).transactionID)
        XCTAssertNoThrow(try response.verifyMessageIntegrity(key: Array(RFC5769.password.utf8)))
        XCTAssertNoThrow(try response.verifyFingerprint())
        XCTAssertNil(agent.session(for: Fixture.client), "a role conflict validates no address")
    }

    /// The same vector with another password: integrity fails → unsigned 401.
    func testRFC5769SampleRequestWithWrongPasswordGets401() throws {
        let agent = ICELiteAgent()
        let id = try agent.register(localUfrag: RFC5769.localUfrag, localPassword: "AAAAAAAAAAAAAAAAAAAAAA",
                                    remoteUfrag: RFC5769.remoteUfrag, now: 0)
        let action = agent.handleSTUN(RFC5769.request, from: Fixture.client, now: 0)
        XCTAssertEqual(action.events, [.reject(.badIntegrity(id))])
        XCTAssertEqual(action.parsedResponse?.errorCode?.code, 401)
        XCTAssertEqual(action.parsedResponse?.hasMessageIntegrity, false)
    }

    func testBadIntegrityGets401AndValidatesNothing() throws {
        let (agent, id) = try Fixture.agentWithSession()
        let action = agent.handleSTUN(try Fixture.request(password: "wrongwrongwrongwrongwrong", useCandidate: true),
                                      from: Fixture.client, now: 0)
        XCTAssertEqual(action.events, [.reject(.badIntegrity(id))])
        let response = try XCTUnwrap(action.parsedResponse)
        XCTAssertEqual(response.type, .bindingError)
        XCTAssertEqual(response.errorCode?.code, 401)
        XCTAssertEqual(action.responseAddress, Fixture.client)
        XCTAssertNil(agent.session(for: Fixture.client))
        XCTAssertNil(agent.selectedAddress(of: id))
    }

    func testMissingIntegrityGets400() throws {
        let (agent, _) = try Fixture.agentWithSession()
        let action = agent.handleSTUN(try Fixture.request(password: nil), from: Fixture.client, now: 0)
        XCTAssertEqual(action.events, [.reject(.badRequest)])
        XCTAssertEqual(action.parsedResponse?.errorCode?.code, 400)
    }

    func testMissingFingerprintGets400() throws {
        let (agent, _) = try Fixture.agentWithSession()
        let action = agent.handleSTUN(try Fixture.request(fingerprint: false), from: Fixture.client, now: 0)
        XCTAssertEqual(action.events, [.reject(.badRequest)])
        XCTAssertEqual(action.parsedResponse?.errorCode?.code, 400)
    }

    func testUnknownUsernameDroppedSilently() throws {
        let (agent, _) = try Fixture.agentWithSession()
        for username in ["nope:\(Fixture.clientUfrag)", "\(Fixture.serverUfrag):someoneElse", "noColonAtAll", ":"] {
            let action = agent.handleSTUN(try Fixture.request(username: username), from: Fixture.client, now: 0)
            XCTAssertEqual(action.events, [.reject(.unknownUsername)], username)
            XCTAssertNil(action.response, username)
        }
        XCTAssertNil(agent.session(for: Fixture.client))
    }

    /// RFC 5389 §6: without the magic cookie a request is RFC 3489 STUN, not ICE: dropped
    /// before libnice (which would answer it in the old form), however valid the rest is.
    func testRequestWithoutMagicCookieIsDroppedAsNotSTUN() throws {
        let (agent, _) = try Fixture.agentWithSession()
        var request = try Fixture.request()
        XCTAssertNotNil(agent.handleSTUN(request, from: Fixture.client, now: 0).response, "the intact request is answered")
        request[5] ^= 0x01
        XCTAssertEqual(agent.handleSTUN(request, from: Fixture.client, now: 0), .drop(.notSTUN))
    }

    func testResponsesDroppedAndKeepaliveIndicationsIgnored() throws {
        let (agent, _) = try Fixture.agentWithSession()
        let success = try STUNResponses.bindingSuccess(transactionID: STUNTransactionID(high: 1, low: 2),
                                                       mappedAddress: .ipv4(address: 1, port: 2), integrityKey: [1])
        XCTAssertEqual(agent.handleSTUN(success, from: Fixture.client, now: 0), .drop(.notBindingRequest))
        let indication = try STUNMessageBuilder(type: .bindingIndication, transactionID: STUNTransactionID(high: 1, low: 3)).build(fingerprint: true)
        XCTAssertEqual(agent.handleSTUN(indication, from: Fixture.client, now: 0), ICEAction(), "keepalive: ignored, no event")
    }

    func testUnknownComprehensionRequiredAttributeGets420() throws {
        let (agent, id) = try Fixture.agentWithSession()
        var builder = STUNMessageBuilder(type: .bindingRequest, transactionID: STUNTransactionID(high: 7, low: 7))
        try builder.appendUsername("\(Fixture.serverUfrag):\(Fixture.clientUfrag)")
        try builder.append(type: 0x0033, value: [1, 2, 3, 4])  // comprehension-required, unknown
        try builder.appendICEControlling(tieBreaker: 1)
        let request = try builder.build(integrityKey: Array(Fixture.serverPassword.utf8), fingerprint: true)
        let action = agent.handleSTUN(request, from: Fixture.client, now: 0)
        XCTAssertEqual(action.events, [.reject(.unknownAttribute(id))])
        XCTAssertEqual(action.parsedResponse?.errorCode?.code, 420)
        XCTAssertEqual(action.parsedResponse?.value(STUNAttributeType.unknownAttributes).map(Array.init), [0x00, 0x33])
    }

    /// RFC 8445 §7.3: the controlling peer nominates with USE-CANDIDATE; before that the
    /// address is validated (media accepted from it) but not selected.
    func testUseCandidateNominates() throws {
        let (agent, id) = try Fixture.agentWithSession()
        let first = agent.handleSTUN(try Fixture.request(transaction: 1), from: Fixture.client, now: 100)
        XCTAssertEqual(first.events, [.checkValidated(id, Fixture.client, nominated: false)])
        XCTAssertEqual(first.parsedResponse?.type, .bindingSuccess)
        XCTAssertEqual(first.parsedResponse?.xorMappedAddress, .ipv4(address: 0xC0A8_0107, port: 50_000))
        XCTAssertNoThrow(try first.parsedResponse?.verifyMessageIntegrity(key: Array(Fixture.serverPassword.utf8)))
        XCTAssertEqual(agent.session(for: Fixture.client), id)
        XCTAssertNil(agent.selectedAddress(of: id))

        let second = agent.handleSTUN(try Fixture.request(useCandidate: true, transaction: 2), from: Fixture.client, now: 200)
        XCTAssertEqual(second.events, [.checkValidated(id, Fixture.client, nominated: true),
                                       .pathChanged(id, old: nil, new: Fixture.client)])
        XCTAssertEqual(agent.selectedAddress(of: id), Fixture.client)

        // Consent checks on the selected path repeat USE-CANDIDATE: no new path event.
        let third = agent.handleSTUN(try Fixture.request(useCandidate: true, transaction: 3), from: Fixture.client, now: 300)
        XCTAssertEqual(third.events, [.checkValidated(id, Fixture.client, nominated: true)])
    }

    /// A client's network switch: a nominated check from a new address replaces the path.
    func testPathChangeToNewAddress() throws {
        let (agent, id) = try Fixture.agentWithSession()
        _ = agent.handleSTUN(try Fixture.request(useCandidate: true), from: Fixture.client, now: 0)
        let unNominated = agent.handleSTUN(try Fixture.request(transaction: 2), from: Fixture.other, now: 10)
        XCTAssertEqual(unNominated.events, [.checkValidated(id, Fixture.other, nominated: false)])
        XCTAssertEqual(agent.selectedAddress(of: id), Fixture.client, "a check without USE-CANDIDATE does not move media")
        let moved = agent.handleSTUN(try Fixture.request(useCandidate: true, transaction: 3), from: Fixture.other, now: 20)
        XCTAssertEqual(moved.events, [.checkValidated(id, Fixture.other, nominated: true),
                                      .pathChanged(id, old: Fixture.client, new: Fixture.other)])
        XCTAssertEqual(agent.selectedAddress(of: id), Fixture.other)
        XCTAssertEqual(agent.session(for: Fixture.other), id)
    }

    /// RFC 7675: consent lasts 30 s after the last authenticated check.
    func testConsentExpiresAfter30sWithoutChecks() throws {
        let (agent, id) = try Fixture.agentWithSession(now: 0)
        _ = agent.handleSTUN(try Fixture.request(useCandidate: true), from: Fixture.client, now: 1_000)
        XCTAssertEqual(agent.nextDeadline(), 31_000)
        XCTAssertEqual(agent.tick(now: 30_999), [])
        XCTAssertEqual(agent.selectedAddress(of: id), Fixture.client)
        XCTAssertEqual(agent.tick(now: 31_000), [.consentExpired(id)])
        XCTAssertNil(agent.selectedAddress(of: id), "media to the peer stops")
        XCTAssertNil(agent.session(for: Fixture.client), "media from the peer is no longer accepted")
        XCTAssertEqual(agent.tick(now: 60_000), [], "reported once")
        XCTAssertNil(agent.nextDeadline())
        let late = agent.handleSTUN(try Fixture.request(useCandidate: true, transaction: 9), from: Fixture.client, now: 32_000)
        XCTAssertEqual(late, .drop(.sessionExpired(id)))
    }

    func testChecksKeepConsentAlive() throws {
        let (agent, id) = try Fixture.agentWithSession(now: 0)
        for second in stride(from: Int64(0), through: 120, by: 5) {
            let now = second * 1_000
            _ = agent.handleSTUN(try Fixture.request(useCandidate: true, transaction: UInt64(second)), from: Fixture.client, now: now)
            XCTAssertEqual(agent.tick(now: now + 4_999), [])
        }
        XCTAssertEqual(agent.selectedAddress(of: id), Fixture.client)
        XCTAssertEqual(agent.tick(now: 150_000), [.consentExpired(id)])
    }

    /// Failed checks (bad integrity) do not refresh consent.
    func testUnauthenticatedChecksDoNotRefreshConsent() throws {
        let (agent, id) = try Fixture.agentWithSession(now: 0)
        _ = agent.handleSTUN(try Fixture.request(password: "wrongwrongwrongwrongwrong"), from: Fixture.client, now: 29_000)
        XCTAssertEqual(agent.tick(now: 30_000), [.consentExpired(id)])
    }

    func testICERestartSwitchesCredentials() throws {
        let (agent, id) = try Fixture.agentWithSession(now: 0)
        _ = agent.handleSTUN(try Fixture.request(useCandidate: true), from: Fixture.client, now: 0)
        try agent.restart(id, localUfrag: "newS", localPassword: "anotherPassword0123456789", remoteUfrag: "newC", now: 5_000)
        XCTAssertEqual(agent.handleSTUN(try Fixture.request(useCandidate: true, transaction: 2), from: Fixture.client, now: 6_000),
                       .drop(.unknownUsername), "old credentials are gone")
        let action = agent.handleSTUN(try Fixture.request(username: "newS:newC", password: "anotherPassword0123456789",
                                                          useCandidate: true, transaction: 3), from: Fixture.other, now: 7_000)
        XCTAssertEqual(action.events, [.checkValidated(id, Fixture.other, nominated: true),
                                       .pathChanged(id, old: Fixture.client, new: Fixture.other)])
    }

    func testIPv6SourceGetsIPv6MappedAddress() throws {
        let (agent, id) = try Fixture.agentWithSession()
        let source = try XCTUnwrap(SocketAddress(host: "2001:db8::7", port: 61_000))
        let action = agent.handleSTUN(try Fixture.request(useCandidate: true), from: source, now: 0)
        XCTAssertEqual(action.events.first, .checkValidated(id, source, nominated: true))
        guard case .ipv6(let bytes, let port)? = action.parsedResponse?.xorMappedAddress else { return XCTFail("no IPv6 mapped address") }
        XCTAssertEqual(SocketAddress(ipv6: bytes, port: port), source)
    }

    func testRegistrationErrors() throws {
        let (agent, id) = try Fixture.agentWithSession()
        XCTAssertThrowsError(try agent.register(localUfrag: Fixture.serverUfrag, localPassword: Fixture.serverPassword,
                                                remoteUfrag: "x", now: 0)) { XCTAssertEqual($0 as? ICEError, .duplicateLocalUfrag) }
        XCTAssertThrowsError(try agent.register(localUfrag: "abcd", localPassword: "short", remoteUfrag: "x", now: 0)) {
            XCTAssertEqual($0 as? ICEError, .invalidCredentials)
        }
        XCTAssertThrowsError(try agent.register(localUfrag: "ab:d", localPassword: Fixture.serverPassword, remoteUfrag: "x", now: 0)) {
            XCTAssertEqual($0 as? ICEError, .invalidCredentials)
        }
        agent.remove(id)
        XCTAssertEqual(agent.sessionCount, 0)
        XCTAssertNoThrow(try agent.register(localUfrag: Fixture.serverUfrag, localPassword: Fixture.serverPassword,
                                            remoteUfrag: Fixture.clientUfrag, now: 0))
    }

    /// Random bytes, truncations and single-byte corruptions of a valid check: never a
    /// crash, never a validated address (FINGERPRINT/HMAC catch every corruption).
    func testGarbageNeverCrashesOrValidates() throws {
        let (agent, _) = try Fixture.agentWithSession()
        var rng = SplitMix64(seed: 0x5EED)
        var responses = 0
        for round in 0..<20_000 {
            var bytes = (0..<Int(rng.next() % 200)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if round % 2 == 0, bytes.count >= 20 {  // make it look like STUN to get past the pre-filter
                bytes[0] &= 0x01
                bytes[1] = 0x01
                bytes[2] = 0
                bytes[3] = UInt8((bytes.count - 20) & ~3)
                bytes[4...7] = [0x21, 0x12, 0xA4, 0x42]
            }
            let action = agent.handleSTUN(bytes, from: Fixture.client, now: 0)
            XCTAssertFalse(action.events.contains { if case .checkValidated = $0 { true } else { false } })
            if action.response != nil { responses += 1 }
        }
        let valid = try Fixture.request(useCandidate: true)
        for index in valid.indices {
            var corrupted = valid
            corrupted[index] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
            XCTAssertFalse(agent.handleSTUN(corrupted, from: Fixture.client, now: 0).events
                .contains { if case .checkValidated = $0 { true } else { false } }, "byte \(index)")
            XCTAssertFalse(agent.handleSTUN(Array(valid[0..<index]), from: Fixture.client, now: 0).events
                .contains { if case .checkValidated = $0 { true } else { false } }, "truncated at \(index)")
        }
        XCTAssertNil(agent.session(for: Fixture.client))
        print("garbage: \(responses) error responses to 20000 random datagrams")
    }
}
