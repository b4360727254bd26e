import Peer
import XCTest

final class NTPTimeTests: XCTestCase {
    func testUnixEpochAndFraction() {
        // 1970-01-01 is NTP second 2208988800 (RFC 868); 0.5 s is fraction 2^31.
        XCTAssertEqual(NTPTime.timestamp(unixMicroseconds: 0), 2_208_988_800 << 32)
        XCTAssertEqual(NTPTime.timestamp(unixMicroseconds: 1_500_000), (2_208_988_801 << 32) | (1 << 31))
        XCTAssertEqual(NTPTime.middle32((2_208_988_801 << 32) | (1 << 31)), UInt32(truncatingIfNeeded: (2_208_988_801 << 16)) | (1 << 15))
    }

    /// RFC 3550 §6.4.1 example: A = 0xb710:8000 (46864.500 s), LSR = 0xb705:2000, DLSR =
    /// 0x0005:4000 (5.250 s) → RTT = 0x0006:2000 = 6.125 s.
    func testRoundTripFromRFC3550Example() throws {
        let rtt = try XCTUnwrap(NTPTime.roundTripMilliseconds(arrivalMiddle32: 0xB710_8000, lastSenderReport: 0xB705_2000,
                                                               delaySinceLastSenderReport: 0x0005_4000))
        XCTAssertEqual(rtt, 6125, accuracy: 0.001)
        XCTAssertNil(NTPTime.roundTripMilliseconds(arrivalMiddle32: 5, lastSenderReport: 0, delaySinceLastSenderReport: 0))
        XCTAssertNil(NTPTime.roundTripMilliseconds(arrivalMiddle32: 0x10, lastSenderReport: 0x20, delaySinceLastSenderReport: 0),
                     "negative (skewed) RTT is no RTT")
    }
}
