extension RTCPTransportFeedback {
    /// Wraps a feedback body into the RTPFB FMT 15 packet (draft -01 §3.1).
    public init(senderSSRC: UInt32, mediaSSRC: UInt32, feedback: TransportFeedback) throws(TransportFeedbackError) {
        self.init(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, body: try feedback.encodedBody())
    }

    /// Decodes the opaque body kept by `RTCPCompound.parse`.
    public func decoded() throws(TransportFeedbackError) -> TransportFeedback {
        try TransportFeedback(body: body)
    }
}
