@testable import Bench
import XCTest

final class ServerMetricsTests: XCTestCase {
    func testMetricsURLFromTheSignalingURL() {
        XCTAssertEqual(ServerMetrics.metricsURL(forSignalingURL: "ws://127.0.0.1:8088/v1/ws"), "http://127.0.0.1:8088/metrics")
        XCTAssertEqual(ServerMetrics.metricsURL(forSignalingURL: "wss://sb.example/v1/ws?x=1"), "https://sb.example/metrics")
        XCTAssertEqual(ServerMetrics.metricsURL(forSignalingURL: "WS://[::1]:9/v1/ws"), "http://[::1]:9/metrics")
        XCTAssertNil(ServerMetrics.metricsURL(forSignalingURL: "http://127.0.0.1:8088/v1/ws"))
        XCTAssertNil(ServerMetrics.metricsURL(forSignalingURL: "not a url"))
    }

    func testValueOfAnUnlabelledSample() {
        let text = """
            # HELP switchboard_db_bytes_in_use Bytes in use.
            # TYPE switchboard_db_bytes_in_use gauge
            switchboard_db_bytes_in_use_total 1
            switchboard_db_bytes_in_use 5427200
            switchboard_hub_batch_frames{le="1"} 3
            """
        XCTAssertEqual(ServerMetrics.value(of: "switchboard_db_bytes_in_use", in: text), 5_427_200)
        XCTAssertEqual(ServerMetrics.value(of: "switchboard_db_bytes_in_use_total", in: text), 1)
        XCTAssertNil(ServerMetrics.value(of: "switchboard_hub_batch_frames", in: text), "labelled samples are not this name")
        XCTAssertNil(ServerMetrics.value(of: "switchboard_missing", in: text))
        XCTAssertNil(ServerMetrics.value(of: "x", in: "x not-a-number"))
    }
}
