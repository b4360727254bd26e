import XCTest
@testable import SRTP

final class SRTPSessionTests: XCTestCase {
    /// A sender/receiver pair with distinct random keys per direction, as DTLS-SRTP gives.
    static func pair(_ profile: SRTPProfile) throws -> (a: SRTPSession, b: SRTPSession) {
        func random(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8.random(in: 0...255) } }
        let aKey = random(profile.keyLength), aSalt = random(profile.saltLength)
        let bKey = random(profile.keyLength), bSalt = random(profile.saltLength)
        let a = try SRTPSession(profile: profile, localKey: aKey, localSalt: aSalt, remoteKey: bKey, remoteSalt: bSalt)
        let b = try SRTPSession(profile: profile, localKey: bKey, localSalt: bSalt, remoteKey: aKey, remoteSalt: aSalt)
        return (a, b)
    }

    static func rtp(sequence: UInt16, ssrc: UInt32 = 0x1234_5678, payloadLength: Int = 160) -> [UInt8] {
        var p: [UInt8] = [0x80, 111, UInt8(sequence >> 8), UInt8(sequence & 0xFF), 0, 0, 0x10, 0x00,
                          UInt8(ssrc >> 24), UInt8(ssrc >> 16 & 0xFF), UInt8(ssrc >> 8 & 0xFF), UInt8(ssrc & 0xFF)]
        p += (0..<payloadLength).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(sequence)) }
        return p
    }

    /// RFC 3550 §6.4.2 Receiver Report with one report block (32 bytes).
    static let rtcpReceiverReport: [UInt8] = [0x81, 201, 0x00, 0x07, 0x12, 0x34, 0x56, 0x78,
                                              0xca, 0xfe, 0xba, 0xbe, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x10, 0x00,
                                              0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]

    func testRoundTripBothDirectionsBothProfiles() throws {
        for profile in SRTPProfile.allCases {
            let (a, b) = try Self.pair(profile)
            for (sender, receiver) in [(a, b), (b, a)] {
                for seq in UInt16(65_530)...UInt16(65_535) {  // across nothing special, then wrap below
                    let plain = Self.rtp(sequence: seq)
                    var packet = plain
                    try sender.protectRTP(&packet)
                    XCTAssertEqual(packet.count, plain.count + profile.rtpOverhead, "\(profile)")
                    XCTAssertNotEqual(Array(packet[12..<plain.count]), Array(plain[12...]), "payload must be encrypted")
                    try receiver.unprotectRTP(&packet)
                    XCTAssertEqual(packet, plain, "\(profile)")
                }
                for seq in UInt16(0)...UInt16(3) {  // after the 16-bit wrap (ROC 1, RFC 3711 §3.3.1)
                    var packet = Self.rtp(sequence: seq)
                    try sender.protectRTP(&packet)
                    try receiver.unprotectRTP(&packet)
                    XCTAssertEqual(packet, Self.rtp(sequence: seq))
                }
                var rtcp = Self.rtcpReceiverReport
                try sender.protectRTCP(&rtcp)
                XCTAssertEqual(rtcp.count, Self.rtcpReceiverReport.count + profile.rtcpOverhead)
                try receiver.unprotectRTCP(&rtcp)
                XCTAssertEqual(rtcp, Self.rtcpReceiverReport)
            }
            XCTAssertEqual(a.authFailures + b.authFailures + a.replays + b.replays, 0)
        }
    }

    func testRawBufferInPlaceAPI() throws {
        let (a, b) = try Self.pair(.aeadAES128GCM)
        let plain = Self.rtp(sequence: 7, payloadLength: 1188)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1500, alignment: 8)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: plain)
        let protectedLength = try a.protectRTP(buffer, length: plain.count)
        XCTAssertEqual(protectedLength, 1200 + 16)
        let plainLength = try b.unprotectRTP(buffer, length: protectedLength)
        XCTAssertEqual(Array(buffer[0..<plainLength]), plain)
    }

    func testTamperedPacketIsAuthFailureAndCounted() throws {
        for profile in SRTPProfile.allCases {
            let (a, b) = try Self.pair(profile)
            var packet = Self.rtp(sequence: 100)
            try a.protectRTP(&packet)
            packet[20] ^= 0x01
            XCTAssertThrowsError(try b.unprotectRTP(&packet)) { XCTAssertEqual($0 as? SRTPError, .authFailure) }
            XCTAssertEqual(b.authFailures, 1)
            var rtcp = Self.rtcpReceiverReport
            try a.protectRTCP(&rtcp)
            rtcp[rtcp.count - 1] ^= 0x80  // tag
            XCTAssertThrowsError(try b.unprotectRTCP(&rtcp)) { XCTAssertEqual($0 as? SRTPError, .authFailure) }
            XCTAssertEqual(b.authFailures, 2)
            // The failed packet left the array as received (no partial state for the caller).
            XCTAssertEqual(packet.count, Self.rtp(sequence: 100).count + profile.rtpOverhead)
        }
    }

    func testReplayedPacketIsRejectedAndCounted() throws {
        for profile in SRTPProfile.allCases {
            let (a, b) = try Self.pair(profile)
            var packet = Self.rtp(sequence: 500)
            try a.protectRTP(&packet)
            let copy = packet
            try b.unprotectRTP(&packet)
            var replayed = copy
            XCTAssertThrowsError(try b.unprotectRTP(&replayed)) { XCTAssertEqual($0 as? SRTPError, .replay) }
            XCTAssertEqual(b.replays, 1)

            // Older than the 1024-packet window: rejected as replay too.
            var old = Self.rtp(sequence: 501)
            try a.protectRTP(&old)
            for seq in UInt16(502)...UInt16(502 + 1100) {
                var p = Self.rtp(sequence: seq, payloadLength: 20)
                try a.protectRTP(&p)
                try b.unprotectRTP(&p)
            }
            XCTAssertThrowsError(try b.unprotectRTP(&old)) { XCTAssertEqual($0 as? SRTPError, .replay) }
            XCTAssertEqual(b.replays, 2)

            // Reordered within the window is fine.
            var late = Self.rtp(sequence: 1700)
            var later = Self.rtp(sequence: 1701)
            try a.protectRTP(&late)
            try a.protectRTP(&later)
            try b.unprotectRTP(&later)
            try b.unprotectRTP(&late)

            // SRTCP replay (RFC 3711 §3.4 index).
            var rtcp = Self.rtcpReceiverReport
            try a.protectRTCP(&rtcp)
            var rtcpCopy = rtcp
            try b.unprotectRTCP(&rtcp)
            XCTAssertThrowsError(try b.unprotectRTCP(&rtcpCopy)) { XCTAssertEqual($0 as? SRTPError, .replay) }
            XCTAssertEqual(b.replays, 3)
        }
    }

    func testSenderMayRepeatSequenceNumberForRetransmission() throws {
        let (a, _) = try Self.pair(.aeadAES128GCM)
        var first = Self.rtp(sequence: 9)
        var again = Self.rtp(sequence: 9)
        try a.protectRTP(&first)
        try a.protectRTP(&again)  // allow_repeat_tx
        XCTAssertEqual(first, again)
    }

    func testWrongKeyFailsAuthentication() throws {
        for profile in SRTPProfile.allCases {
            let (a, _) = try Self.pair(profile)
            let (_, stranger) = try Self.pair(profile)
            var packet = Self.rtp(sequence: 1)
            try a.protectRTP(&packet)
            XCTAssertThrowsError(try stranger.unprotectRTP(&packet)) { XCTAssertEqual($0 as? SRTPError, .authFailure) }
            XCTAssertEqual(stranger.authFailures, 1)
        }
    }

    func testMalformedPacketsAreRejectedNotCrashing() throws {
        let (a, b) = try Self.pair(.aes128CMHMACSHA180)
        let cases: [[UInt8]] = [
            [],
            [0x80],
            Array(Self.rtp(sequence: 1).prefix(11)),
            [0x8F] + Array(Self.rtp(sequence: 1).dropFirst().prefix(40)),  // 15 CSRCs claimed, 41 bytes
            [0x90, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xBE, 0xDE, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 20),  // ext too long
            [0x40] + [UInt8](repeating: 0, count: 40),  // version 1
            (0..<64).map { _ in UInt8.random(in: 0...255) } .enumerated().map { $0.offset == 0 ? 0x3F : $0.element },
        ]
        for bad in cases {
            var packet = bad
            XCTAssertThrowsError(try b.unprotectRTP(&packet)) { XCTAssertEqual($0 as? SRTPError, .malformedPacket) }
            var rtcp = bad
            if bad.count < 8 || bad.first.map({ $0 >> 6 != 2 }) == true {
                XCTAssertThrowsError(try b.unprotectRTCP(&rtcp)) { XCTAssertEqual($0 as? SRTPError, .malformedPacket) }
            }
        }
        XCTAssertGreaterThan(b.malformed, 0)
        var short = [UInt8](repeating: 0, count: 4)
        XCTAssertThrowsError(try a.protectRTP(&short)) { XCTAssertEqual($0 as? SRTPError, .malformedPacket) }
        // Random garbage with a valid-looking first byte: authentication fails, nothing crashes.
        for _ in 0..<200 {
            var garbage = (0..<Int.random(in: 30...300)).map { _ in UInt8.random(in: 0...255) }
            garbage[0] = 0x80
            XCTAssertThrowsError(try b.unprotectRTP(&garbage))
        }
    }

    func testInsufficientCapacityAndBadKeys() throws {
        let (a, _) = try Self.pair(.aeadAES128GCM)
        let plain = Self.rtp(sequence: 3)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: plain.count + 15, alignment: 8)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: plain)
        XCTAssertThrowsError(try a.protectRTP(buffer, length: plain.count)) { XCTAssertEqual($0 as? SRTPError, .insufficientCapacity) }
        XCTAssertThrowsError(try a.protectRTP(buffer, length: plain.count + 100)) { XCTAssertEqual($0 as? SRTPError, .malformedPacket) }

        XCTAssertThrowsError(try SRTPSession(profile: .aeadAES128GCM, localKey: [UInt8](repeating: 1, count: 16),
                                             localSalt: [UInt8](repeating: 1, count: 14), // CM salt length for GCM
                                             remoteKey: [UInt8](repeating: 1, count: 16), remoteSalt: [UInt8](repeating: 1, count: 12))) {
            XCTAssertEqual($0 as? SRTPError, .badKeyLength)
        }
        XCTAssertEqual(SRTPError.authFailure.code, "srtp_auth_failure")
        XCTAssertEqual(SRTPProfile.aeadAES128GCM.identifier, 7)
    }
}
