import XCTest
@testable import Server

final class MediaMetricsNameTests: XCTestCase {
    func testCounterNamesBecomePrometheusSnakeCase() {
        XCTAssertEqual(SwitchboardServer.snakeCase("srtpAuthFailures"), "srtp_auth_failures")
        XCTAssertEqual(SwitchboardServer.snakeCase("unknownSSRC"), "unknown_ssrc")
        XCTAssertEqual(SwitchboardServer.snakeCase("loopCPUNanoseconds"), "loop_cpu_nanoseconds")
        XCTAssertEqual(SwitchboardServer.snakeCase("rtpIn"), "rtp_in")
        XCTAssertEqual(SwitchboardServer.snakeCase("forwarded"), "forwarded")
    }
}
