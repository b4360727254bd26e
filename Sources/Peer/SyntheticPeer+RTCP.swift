import Glibc
import IO
import RTP
import SRTP

/// RTCP of `SyntheticPeer` (RFC 3550 §6), on the loop thread: a compound SR (or RR when not
/// sending) + SDES CNAME every `rtcpIntervalMilliseconds`, report blocks with LSR/DLSR for every
/// received SSRC, and RTT from the blocks the other side reports about our SSRCs.
extension SyntheticPeer {
    /// 1 s: libwebrtc's video RTCP interval; frequent enough for an SFU test to see reports
    /// within a couple of seconds (RFC 3550's 5 s minimum is relaxed by RFC 4585 §3.5 for AVPF).
    public static let rtcpIntervalMilliseconds: Int64 = 1_000

    func scheduleRTCP() {
        guard rtcpTimer == nil, state != .closed else { return }
        rtcpTimer = loop.schedule(afterMilliseconds: Self.rtcpIntervalMilliseconds) { [weak self] in
            guard let self else { return }
            self.rtcpTimer = nil
            guard self.state == .connected else { return }
            self.sendRTCP()
            self.scheduleRTCP()
        }
    }

    func sendRTCP() {
        guard let srtp else { return }
        let nowMicros = EventLoop.monotonicMicroseconds()
        let ntp = NTPTime.timestamp(unixMicroseconds: Self.wallClockMicroseconds())
        let blocks = Array(receivers.values.sorted { $0.ssrc < $1.ssrc }.prefix(31).map { $0.reportBlock(nowMicroseconds: nowMicros) })
        var packets: [RTCPPacket] = []
        var chunks: [RTCPSourceDescription.Chunk] = []
        let cname = Array((tracks.first?.cname ?? configuration.name).utf8.prefix(255))
        for ssrc in tracks.flatMap(\.mediaSSRCs) {  // every simulcast layer is its own RTP stream
            guard let sender, let entry = sender.sent[ssrc],
                  let rtpTimestamp = sender.rtpTimestamp(for: ssrc, nowMicroseconds: nowMicros) else { continue }
            packets.append(.senderReport(RTCPSenderReport(
                ssrc: ssrc, ntpTimestamp: ntp, rtpTimestamp: rtpTimestamp, packetCount: entry.packets,
                octetCount: entry.octets, reportBlocks: packets.isEmpty ? blocks : [])))
            chunks.append(.init(ssrc: ssrc, items: [.init(type: 1, value: cname)]))
        }
        if packets.isEmpty {
            guard !blocks.isEmpty else { return }
            packets.append(.receiverReport(RTCPReceiverReport(ssrc: receiveOnlySSRC, reportBlocks: blocks)))
            chunks.append(.init(ssrc: receiveOnlySSRC, items: [.init(type: 1, value: cname)]))
        }
        packets.append(.sourceDescription(RTCPSourceDescription(chunks: chunks)))
        guard var bytes = try? RTCPCompound.serialize(packets) else { return }
        bytes.reserveCapacity(bytes.count + srtp.profile.rtcpOverhead)
        do { try srtp.protectRTCP(&bytes) } catch {
            counters.sendFailures += 1
            return
        }
        if send(bytes) { counters.rtcpSent += 1 }
    }

    /// Handles one unprotected compound RTCP packet.
    func receiveRTCP(_ bytes: [UInt8]) {
        guard let packets = try? RTCPCompound.parse(bytes) else {
            counters.droppedDatagrams += 1
            return
        }
        counters.rtcpPackets += 1
        let nowMicros = EventLoop.monotonicMicroseconds()
        let ours = Set(tracks.flatMap(\.mediaSSRCs) + [receiveOnlySSRC])
        var blocks: [RTCPReportBlock] = []
        for packet in packets {
            switch packet {
            case .senderReport(let report):
                counters.senderReportsReceived += 1
                receivers[report.ssrc]?.lastSenderReport = (NTPTime.middle32(report.ntpTimestamp), nowMicros)
                blocks += report.reportBlocks
            case .receiverReport(let report):
                blocks += report.reportBlocks
            default:
                _ = handleSenderFeedback(packet)
            }
        }
        let arrival = NTPTime.middle32(NTPTime.timestamp(unixMicroseconds: Self.wallClockMicroseconds()))
        for block in blocks where ours.contains(block.ssrc) {
            counters.reportBlocksReceived += 1
            if let rtt = NTPTime.roundTripMilliseconds(arrivalMiddle32: arrival, lastSenderReport: block.lastSenderReport,
                                                       delaySinceLastSenderReport: block.delaySinceLastSenderReport) {
                counters.roundTripMilliseconds = rtt
            }
        }
    }

    static func wallClockMicroseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1_000
    }
}
